"""The audit's hostile destinations, shared by every outbound client's tests.

LLM providers (``tests/security/test_egress.py``) and search endpoints
(``tests/metrics/search/test_egress.py``) are held to the same list: every non-public
address (with the kind the guard names), every spelling of loopback a URL can carry, and
base URLs that are not an http(s) origin.
"""

REFUSED = [
    ("127.0.0.1", "loopback"),
    ("127.8.9.10", "loopback"),
    ("::1", "loopback"),
    ("169.254.169.254", "link-local"),
    ("fe80::1", "link-local"),
    ("10.1.2.3", "private"),
    ("172.16.0.1", "private"),
    ("192.168.1.1", "private"),
    ("fc00::1", "private"),
    ("0.0.0.0", "unspecified"),
    ("::", "unspecified"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("ff02::1", "multicast"),
    ("240.0.0.1", "reserved"),
    ("100.64.0.1", "non-public"),  # carrier-grade NAT
    ("192.0.2.10", "private"),  # documentation
    ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped
    ("::ffff:169.254.169.254", "link-local"),
    ("64:ff9b::a9fe:a9fe", "link-local"),  # NAT64 of 169.254.169.254
    ("2002:7f00:1::", "loopback"),  # 6to4 of 127.0.0.1
]

#: Spellings of 127.0.0.1 / ::1 in a URL's host (numeric forms the resolver accepts).
LOOPBACK_FORMS = [
    "127.0.0.1",
    "localhost",
    "[::1]",
    "2130706433",  # 127.0.0.1 as one decimal number
    "0x7f000001",  # and in hexadecimal
    "0x7f.1",
    "0177.0.0.1",  # octal
    "127.1",
    "[::ffff:127.0.0.1]",
]

#: Base URLs the guard refuses, with a word of the reason.
BAD_BASE_URLS = [
    ("http://user:pw@llm.example/v1", "user info"),
    ("http://user@llm.example/v1", "user info"),
    ("http://@llm.example/v1", "user info"),
    ("ftp://llm.example/v1", "http"),
    ("file:///etc/passwd", "http"),
    ("gopher://127.0.0.1:6379/_INFO", "http"),
    ("http:///v1", "no host"),
    ("http://llm.example/v1?x=1", "query"),
    ("http://llm.example/v1#f", "fragment"),
    ("http://llm.example:99999/v1", "valid URL"),
]
