"""Measure names: parsing, canonical names and trec_eval equivalents.

Three spellings are accepted and resolve to the same :class:`Measure` objects:

* trec_eval names (``ndcg_cut.10``, ``P.5,10``, ``map``, ``ndcg.0=0,1=1,2=3``...);
* ir_measures names (``nDCG@10``, ``P(rel=2)@10``, ``nDCG(dcg='exp-log2')@10``...);
* Graded's explicit NDCG flavours
  (``nDCG(gain=exp,discount=jk,ideal=recall,empty=one,judged_only=true)@10``).

Every measure has a :attr:`Measure.canonical` name that spells its full flavour
(results are keyed by it) and, where one exists, :attr:`Measure.trec_name`, the
trec_eval ``-m`` spelling of the same computation.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache

from metrics.engine.errors import MeasureError

DEFAULT_W_IRR = -1.0 / 3.0
DEFAULT_SCALE_TOP = 4.0
TREC_DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
SUCCESS_DEFAULT_CUTOFFS = (1, 5, 10)
UNJ_DEFAULT_CUTOFFS = (5, 10, 20)
# trec_eval's multiples of R of Rprec_mult.
RPREC_MULT_DEFAULT_LEVELS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
# trec_eval's default persistence of rbp and rbp_resid, and utility's coefficients.
DEFAULT_RBP_P = 0.9
DEFAULT_UTILITY = (1.0, -1.0, 0.0, 0.0)
# trec_eval's recall levels of iprec_at_recall and 11pt_avg.
IPREC_DEFAULT_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
# trec_eval floors a query's value at this before taking logs (gm_map, gm_bpref).
MIN_GEO_MEAN = 0.00001

GAINS = ("linear", "exp")
DISCOUNTS = ("log2", "jk", "rank")
IDEALS = ("local", "recall", "global", "max")
EMPTIES = ("zero", "one", "skip")

# Families whose summary value is a sum over queries (trec_eval prints them as integers).
SUM_FAMILIES = frozenset({"NumQ", "NumRet", "NumRel", "NumRelRet", "NumNonRelJudgedRet"})
# Families summarised by the geometric mean of max(value, MIN_GEO_MEAN) (trec_eval gm_*).
GEOMETRIC_FAMILIES = frozenset({"GMAP", "GMBpref"})
# Families trec_eval prints only as a summary, never per query.
SUMMARY_ONLY_FAMILIES = frozenset({"NumQ", "GMAP", "GMBpref"})
# Families computed by sibling modules owned by other code (see core._external).
EXTERNAL_FAMILIES = frozenset({"UDCG", "sNDCG", "RNDCG"})
# Families whose per-query value is text, not a number (no summary; trec_eval relstring).
TEXT_FAMILIES = frozenset({"RelString"})
RELSTRING_DEFAULT_LENGTH = 10
# trec_eval's measures whose gains come from the label (or a level=gain map).
GAIN_LEVEL_FAMILIES = frozenset({"RBP", "G", "nDCGRel", "RLevelNDCG"})


def _fmt(x: float) -> str:
    """Format a parameter value: ``1`` not ``1.0``, ``-1/3`` rather than 16 digits."""
    x = float(x)
    if x.is_integer():
        return str(int(x))
    text = repr(x)
    if len(text) > 8:
        frac = Fraction(x).limit_denominator(1000)
        if float(frac) == x:
            return f"{frac.numerator}/{frac.denominator}"
    return text


@dataclass(frozen=True)
class Measure:
    """One fully resolved evaluation measure.

    Only the fields that matter to the computation take part in equality and
    hashing; ``requested`` (the name as written) and ``trec_style`` (whether it was
    written as a trec_eval name) do not.
    """

    family: str
    cutoff: int | None = None
    rel: float = 1.0
    judged_only: bool = False
    gain: str = "linear"
    gains: tuple[tuple[float, float], ...] | None = None
    discount: str = "log2"
    ideal: str = "global"
    empty: str = "zero"
    top: float = DEFAULT_SCALE_TOP
    w_irr: float = DEFAULT_W_IRR
    level: float | None = None
    beta: float = 1.0
    p: float = DEFAULT_RBP_P
    coeffs: tuple[float, float, float, float] = DEFAULT_UTILITY
    n_docs: int = 0
    requested: str = field(default="", compare=False)
    trec_style: bool = field(default=False, compare=False)

    # ----------------------------------------------------------------- names
    @property
    def canonical(self) -> str:
        """Return the name that spells the measure's full flavour (results are keyed by it)."""
        return _canonical(self)

    @property
    def trec_name(self) -> str | None:
        """Return the trec_eval ``-m`` spelling of this measure, or ``None`` if none exists.

        Flags that trec_eval would also need (``-l2``, ``-J``) are in :attr:`trec_flags`.
        """
        return _trec_name(self)

    @property
    def trec_flags(self) -> tuple[str, ...]:
        """Return the trec_eval command-line flags that :attr:`trec_name` needs."""
        flags: list[str] = []
        if self.family in _REL_FAMILIES and self.rel != 1:
            flags.append(f"-l{_fmt(self.rel)}")
        if self.judged_only:
            flags.append("-J")
        if self.family == "Utility" and self.coeffs[3] != 0:
            flags.append(f"-N{self.n_docs}")
        return tuple(flags)

    @property
    def trec_output_name(self) -> str | None:
        """Return the name trec_eval prints for this measure (``ndcg_cut_10``, ``P_10``)."""
        name = self.trec_name
        if name is None:
            return None
        if self.family == "IPrec":
            return f"iprec_at_recall_{self.level:3.2f}"
        if self.family == "RprecMult":
            return f"Rprec_mult_{self.level:3.2f}"
        base = name.partition(".")[0]
        if base in _TREC_PARAM_TEXT:
            # trec_eval prints the parameter text as written: rbp.p=0.8 -> rbp_p=0.8
            written = self.requested.strip()
            if self.trec_style and written.startswith(base + "."):
                return base + "_" + written[len(base) + 1 :]
            return name.replace(".", "_", 1) if "." in name else name
        if self.family == "nDCG" and self.cutoff is None:
            if self.gains is None:
                return "ndcg"
            # trec_eval prints the parameter text as written: ndcg.2=5,0=0 -> ndcg_2=5,0=0
            written = self.requested.strip()
            if self.trec_style and written.startswith("ndcg."):
                return "ndcg_" + written[len("ndcg.") :]
        return name.replace(".", "_")

    @property
    def display(self) -> str:
        """Return the report label: the trec_eval name if requested by it, else canonical."""
        if self.trec_style and self.trec_output_name is not None:
            return self.trec_output_name
        return self.canonical

    @property
    def aggregate(self) -> str:
        """Return how per-query values are summarised: ``"mean"``, ``"sum"``, ``"gm"``, ``"none"``.

        ``"none"``: a text measure (``relstring``), printed per query only.
        ``"gm"`` is trec_eval's geometric mean: ``exp(mean(log(max(v, MIN_GEO_MEAN))))``,
        so one query scoring 0 costs as much as a query scoring 0.00001.
        """
        if self.family in SUM_FAMILIES:
            return "sum"
        if self.family in TEXT_FAMILIES:
            return "none"
        return "gm" if self.family in GEOMETRIC_FAMILIES else "mean"

    @property
    def summary_only(self) -> bool:
        """Return whether trec_eval prints this measure only over all queries (not ``-q``)."""
        return self.family in SUMMARY_ONLY_FAMILIES

    @property
    def is_text(self) -> bool:
        """Return whether values are text (``relstring``): per query only, never summarised."""
        return self.family in TEXT_FAMILIES

    @property
    def is_integer(self) -> bool:
        """Return whether values are counts (printed as integers, like trec_eval)."""
        return self.family in SUM_FAMILIES

    @property
    def depth(self) -> int | None:
        """Return the ranking depth this measure reads, or ``None`` for the whole ranking."""
        return _depth(self)

    def __str__(self) -> str:
        """Return the canonical name."""
        return self.canonical


_SET_FAMILIES = frozenset({"SetP", "SetR", "SetF", "SetAP", "SetRelP"})
# trec_eval measures whose -m parameters are free text it prints back as written.
_TREC_PARAM_TEXT = frozenset({"rbp", "rbp_resid", "utility", "G", "ndcg_rel", "Rndcg", "relstring"})
_REL_FAMILIES = frozenset(
    {
        "P",
        "R",
        "AP",
        "RR",
        "Rprec",
        "Bpref",
        "Success",
        "NumRel",
        "NumRelRet",
        "UDCG",
        "GMAP",
        "GMBpref",
        "IPrec",
        "IPrecAvg",
        "NumNonRelJudgedRet",
        "InfAP",
        "Utility",
        "RelP",
        "RprecMult",
        "BinG",
        "RLevelNDCG",
        *_SET_FAMILIES,
    }
)


def _canonical(m: Measure) -> str:
    fam = m.family
    at = f"@{m.cutoff}" if m.cutoff is not None else ""
    jo = ",judged_only=true" if m.judged_only else ""
    if fam == "nDCG":
        if m.gains is not None:
            gain = "{" + ",".join(f"{_fmt(k)}:{_fmt(v)}" for k, v in m.gains) + "}"
        else:
            gain = m.gain
        top = f",top={_fmt(m.top)}" if m.ideal == "max" else ""
        return (
            f"nDCG(gain={gain},discount={m.discount},ideal={m.ideal}{top},empty={m.empty}{jo}){at}"
        )
    if fam in ("P", "R", "AP", "RR", "Rprec", "Success", "GMAP", "IPrecAvg"):
        return f"{fam}(rel={_fmt(m.rel)}{jo}){at}"
    if fam in ("SetP", "SetR", "SetAP", "SetRelP"):
        return f"{fam}(rel={_fmt(m.rel)}{jo})"
    if fam == "SetF":
        return f"SetF(rel={_fmt(m.rel)},beta={_fmt(m.beta)}{jo})"
    if fam == "IPrec":
        return f"IPrec(rel={_fmt(m.rel)}{jo})@{_fmt(m.level)}"  # type: ignore[arg-type]
    if fam in ("Bpref", "GMBpref", "NumNonRelJudgedRet"):
        return f"{fam}(rel={_fmt(m.rel)})"
    if fam == "Judged":
        return f"Judged{at}"
    if fam == "ERR":
        return f"ERR(top={_fmt(m.top)}){at}"
    if fam == "NumQ":
        return "NumQ"
    if fam == "NumRet":
        return "NumRet(judged_only=true)" if m.judged_only else "NumRet"
    if fam == "NumRel":
        return f"NumRel(rel={_fmt(m.rel)})"
    if fam == "NumRelRet":
        return f"NumRet(rel={_fmt(m.rel)})"
    if fam == "UDCG":
        return f"UDCG(rel={_fmt(m.rel)},w_irr={_fmt(m.w_irr)}){at}"
    if fam in ("sNDCG", "RNDCG"):
        return f"{fam}(gain={m.gain}){at}"
    if fam in ("InfAP", "BinG"):
        return f"{fam}(rel={_fmt(m.rel)}{jo})"
    if fam in ("RelP", "RprecMult"):
        at = f"@{_fmt(m.level)}" if fam == "RprecMult" else at  # type: ignore[arg-type]
        return f"{fam}(rel={_fmt(m.rel)}{jo}){at}"
    if fam in ("Unj", "RelString"):
        return f"{fam}{'(judged_only=true)' if m.judged_only else ''}{at}"
    if fam in ("RBP", "RBPResid"):
        gain = f",gain={_gain_text(m)}" if fam == "RBP" else ""
        return f"{fam}(p={_fmt(m.p)}{gain}{jo})"
    if fam in ("G", "nDCGRel"):
        return f"{fam}(gain={_gain_text(m)}{jo})"
    if fam == "RLevelNDCG":
        return f"{fam}(rel={_fmt(m.rel)},gain={_gain_text(m)}{jo})"
    if fam == "Utility":
        a, b, c, d = (_fmt(x) for x in m.coeffs)
        n = f",n_docs={m.n_docs}" if m.coeffs[3] != 0 else ""
        return f"Utility(a={a},b={b},c={c},d={d}{n},rel={_fmt(m.rel)}{jo})"
    raise AssertionError(fam)  # pragma: no cover


def _gain_text(m: Measure) -> str:
    """Return ``linear`` or the gain map as ``{0:0,1:3}``."""
    if m.gains is None:
        return m.gain
    return "{" + ",".join(f"{_fmt(k)}:{_fmt(v)}" for k, v in m.gains) + "}"


def _pairs_text(m: Measure, lead: str = "") -> str:
    """Return trec_eval's ``name.`` parameter text of a gain map (after ``lead``), or ''."""
    items = [lead] if lead else []
    if m.gains is not None:
        items += [f"{_fmt(a)}={_fmt(b)}" for a, b in m.gains]
    return "." + ",".join(items) if items else ""


def _trec_name(m: Measure) -> str | None:
    fam, k = m.family, m.cutoff
    if m.family in _REL_FAMILIES and not float(m.rel).is_integer():
        return None
    if fam == "nDCG":
        if (m.discount, m.ideal, m.empty) != ("log2", "global", "zero") or m.gain == "exp":
            return None
        if m.gains is not None:
            if k is not None:
                return None
            return "ndcg." + ",".join(f"{_fmt(a)}={_fmt(b)}" for a, b in m.gains)
        return f"ndcg_cut.{k}" if k is not None else "ndcg"
    simple = {
        "P": "P.{k}",
        "R": "recall.{k}",
        "Success": "success.{k}",
        "Rprec": "Rprec",
        "Bpref": "bpref",
        "NumQ": "num_q",
        "NumRet": "num_ret",
        "NumRel": "num_rel",
        "NumRelRet": "num_rel_ret",
        "NumNonRelJudgedRet": "num_nonrel_judged_ret",
        "GMAP": "gm_map",
        "GMBpref": "gm_bpref",
        "IPrecAvg": "11pt_avg",
        "SetP": "set_P",
        "SetR": "set_recall",
        "SetAP": "set_map",
        "SetRelP": "set_relative_P",
        "InfAP": "infAP",
        "BinG": "binG",
        "RelP": "relative_P.{k}",
        "Unj": "unj.{k}",
    }
    if fam == "IPrec":
        return f"iprec_at_recall.{_fmt(m.level)}"  # type: ignore[arg-type]
    if fam == "RprecMult":
        return f"Rprec_mult.{_fmt(m.level)}"  # type: ignore[arg-type]
    if fam == "RBP":
        return "rbp" + _pairs_text(m, "" if m.p == DEFAULT_RBP_P else f"p={_fmt(m.p)}")
    if fam == "RBPResid":
        return "rbp_resid" + ("" if m.p == DEFAULT_RBP_P else f".p={_fmt(m.p)}")
    if fam in ("G", "nDCGRel", "RLevelNDCG"):
        return {"G": "G", "nDCGRel": "ndcg_rel", "RLevelNDCG": "Rndcg"}[fam] + _pairs_text(m)
    if fam == "RelString":
        return "relstring" if k == RELSTRING_DEFAULT_LENGTH else f"relstring.{k}"
    if fam == "Utility":
        if m.coeffs == DEFAULT_UTILITY:
            return "utility"
        return "utility." + ",".join(_fmt(x) for x in m.coeffs)
    if fam == "SetF":
        return "set_F" if m.beta == 1 else None
    if fam == "AP":
        return "map" if k is None else f"map_cut.{k}"
    if fam == "RR":
        return "recip_rank" if k is None else None
    if fam in simple:
        return simple[fam].format(k=k)
    return None


def _depth(m: Measure) -> int | None:
    fam = m.family
    if fam in ("NumQ", "NumRel") or (fam == "NumRet" and not m.judged_only):
        return 0
    if fam == "RNDCG":
        return 0
    if fam in ("NumRelRet", "Rprec", "Bpref") or m.judged_only:
        return None
    if fam in _WHOLE_RANKING:
        return None
    if fam == "nDCG" and m.ideal == "recall":
        return None
    return m.cutoff


_WHOLE_RANKING = frozenset(
    {
        "GMAP",
        "GMBpref",
        "IPrec",
        "IPrecAvg",
        "NumNonRelJudgedRet",
        "InfAP",
        "RBP",
        "RBPResid",
        "Utility",
        "RprecMult",
        "BinG",
        "G",
        "nDCGRel",
        "RLevelNDCG",
        *_SET_FAMILIES,
    }
)

# --------------------------------------------------------------------------- parsing
_TREC_FAMILY = {
    "ndcg": "nDCG",
    "ndcg_cut": "nDCG",
    "map": "AP",
    "map_cut": "AP",
    "P": "P",
    "recall": "R",
    "recip_rank": "RR",
    "Rprec": "Rprec",
    "bpref": "Bpref",
    "success": "Success",
    "num_q": "NumQ",
    "num_ret": "NumRet",
    "num_rel": "NumRel",
    "num_rel_ret": "NumRelRet",
    "num_nonrel_judged_ret": "NumNonRelJudgedRet",
    "gm_map": "GMAP",
    "gm_bpref": "GMBpref",
    "iprec_at_recall": "IPrec",
    "11pt_avg": "IPrecAvg",
    "set_P": "SetP",
    "set_recall": "SetR",
    "set_F": "SetF",
    "set_map": "SetAP",
    "set_relative_P": "SetRelP",
    "infAP": "InfAP",
    "rbp": "RBP",
    "rbp_resid": "RBPResid",
    "utility": "Utility",
    "relative_P": "RelP",
    "Rprec_mult": "RprecMult",
    "binG": "BinG",
    "G": "G",
    "ndcg_rel": "nDCGRel",
    "Rndcg": "RLevelNDCG",
    "unj": "Unj",
    "relstring": "RelString",
}
_TREC_CUT = {"ndcg_cut", "map_cut", "P", "recall", "success", "relative_P", "unj"}
_TREC_DEFAULT_CUTS = {"success": SUCCESS_DEFAULT_CUTOFFS, "unj": UNJ_DEFAULT_CUTOFFS}

_IR_FAMILY = {
    "nDCG": "nDCG",
    "NDCG": "nDCG",
    "P": "P",
    "R": "R",
    "AP": "AP",
    "MAP": "AP",
    "RR": "RR",
    "MRR": "RR",
    "Rprec": "Rprec",
    "RPrec": "Rprec",
    "Bpref": "Bpref",
    "BPref": "Bpref",
    "Judged": "Judged",
    "ERR": "ERR",
    "Success": "Success",
    "NumQ": "NumQ",
    "NumRet": "NumRet",
    "NumRel": "NumRel",
    "NumRelRet": "NumRelRet",
    "UDCG": "UDCG",
    "sNDCG": "sNDCG",
    "RNDCG": "RNDCG",
    "GMAP": "GMAP",
    "GMBpref": "GMBpref",
    "IPrec": "IPrec",
    "IPrecAvg": "IPrecAvg",
    "SetP": "SetP",
    "SetR": "SetR",
    "SetF": "SetF",
    "SetAP": "SetAP",
    "SetRelP": "SetRelP",
    "NumNonRelJudgedRet": "NumNonRelJudgedRet",
    "InfAP": "InfAP",
    "RBP": "RBP",
    "RBPResid": "RBPResid",
    "Utility": "Utility",
    "RelP": "RelP",
    "RprecMult": "RprecMult",
    "BinG": "BinG",
    "G": "G",
    "nDCGRel": "nDCGRel",
    "RLevelNDCG": "RLevelNDCG",
    "Unj": "Unj",
    "RelString": "RelString",
}

_ALLOWED = {
    "nDCG": {"gain", "gains", "dcg", "discount", "ideal", "empty", "judged_only", "top", "cutoff"},
    "P": {"rel", "judged_only", "cutoff"},
    "R": {"rel", "judged_only", "cutoff"},
    "AP": {"rel", "judged_only", "cutoff"},
    "RR": {"rel", "judged_only", "cutoff"},
    "Rprec": {"rel", "judged_only"},
    "Bpref": {"rel"},
    "Success": {"rel", "judged_only", "cutoff"},
    "Judged": {"cutoff"},
    "ERR": {"top", "cutoff"},
    "NumQ": set(),
    "NumRet": {"rel", "judged_only"},
    "NumRel": {"rel"},
    "NumRelRet": {"rel"},
    "UDCG": {"rel", "w_irr", "cutoff"},
    "sNDCG": {"gain", "cutoff"},
    "RNDCG": {"gain", "cutoff"},
    "GMAP": {"rel", "judged_only"},
    "GMBpref": {"rel"},
    "IPrec": {"rel", "judged_only", "cutoff"},
    "IPrecAvg": {"rel", "judged_only"},
    "SetP": {"rel", "judged_only"},
    "SetR": {"rel", "judged_only"},
    "SetF": {"rel", "judged_only", "beta"},
    "SetAP": {"rel", "judged_only"},
    "SetRelP": {"rel", "judged_only"},
    "NumNonRelJudgedRet": {"rel"},
    "InfAP": {"rel", "judged_only"},
    "RBP": {"p", "gain", "gains", "judged_only"},
    "RBPResid": {"p", "judged_only"},
    "Utility": {"a", "b", "c", "d", "n_docs", "rel", "judged_only"},
    "RelP": {"rel", "judged_only", "cutoff"},
    "RprecMult": {"rel", "judged_only", "cutoff"},
    "BinG": {"rel", "judged_only"},
    "G": {"gain", "gains", "judged_only"},
    "nDCGRel": {"gain", "gains", "judged_only"},
    "RLevelNDCG": {"rel", "gain", "gains", "judged_only"},
    "Unj": {"judged_only", "cutoff"},
    "RelString": {"judged_only", "cutoff"},
}
_CUTOFF_REQUIRED = {"P", "R", "Success", "Judged", "IPrec", "RelP", "Unj", "RprecMult"}
# Families whose value trec_eval's -J does not change (they read judged documents only).
_SAME_UNDER_J = frozenset({"Bpref", "GMBpref", "NumQ", "NumRel", "NumRelRet", "NumNonRelJudgedRet"})

_IR_RE = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?:\((.*)\))?\s*(?:@\s*(\S+))?\s*$", re.S)
_TREC_RE = re.compile(r"^\s*([A-Za-z_]+?)(?:[._](.+))?\s*$", re.S)


def _split_top(text: str) -> list[str]:
    """Split ``text`` on commas that are not inside braces, brackets or quotes."""
    parts: list[str] = []
    depth = 0
    quote = ""
    cur: list[str] = []
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
            continue
        if ch in "'\"":
            quote = ch
        elif ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if quote or depth:
        raise MeasureError(f"unbalanced quotes or brackets in {text!r}")
    tail = "".join(cur).strip()
    if tail or parts:
        parts.append(tail)
    return parts


def _number(text: str, what: str) -> float:
    try:
        if "/" in text:  # a fraction such as -1/3
            num, den = text.split("/", 1)
            value = float(num) / float(den)
        else:
            value = float(text)
    except (ValueError, ZeroDivisionError):
        raise MeasureError(f"{what} must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise MeasureError(f"{what} must be finite, got {text!r}")
    return value


def _value(text: str) -> object:
    """Parse one parameter value: quoted string, bool, number, gain map or bare word."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if text.startswith("{") and text.endswith("}"):
        out: list[tuple[float, float]] = []
        for item in _split_top(text[1:-1]):
            if not item:
                continue
            if ":" not in item:
                raise MeasureError(f"gain map entries are label:gain, got {item!r}")
            a, b = item.split(":", 1)
            out.append((_number(str(_value(a)), "gain label"), _number(b, "gain")))
        return tuple(out)
    try:
        return float(text)
    except ValueError:
        return text


def _as_int_cutoff(value: object, name: str) -> int:
    if isinstance(value, bool):
        raise MeasureError(f"cutoff of {name!r} must be a positive integer")
    try:
        f = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise MeasureError(
            f"cutoff of {name!r} must be a positive integer, got {value!r}"
        ) from None
    if not f.is_integer() or f < 1:
        raise MeasureError(f"cutoff of {name!r} must be a positive integer, got {value!r}")
    return int(f)


def _recall_level(value: object, name: str) -> float:
    level = _number(str(value), f"recall level of {name!r}")
    if not 0.0 <= level <= 1.0:
        raise MeasureError(f"recall level of {name!r} must be between 0 and 1, got {value!r}")
    return level


def _as_bool(value: object, key: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, float) and value in (0.0, 1.0):
        return bool(value)
    raise MeasureError(f"{key} must be true or false, got {value!r}")


def _choice(value: object, key: str, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise MeasureError(f"{key} must be one of {', '.join(choices)}; got {value!r}")
    return value


def _build(family: str, params: dict[str, object], name: str, defaults: Measure) -> Measure:
    allowed = _ALLOWED[family]
    unknown = sorted(set(params) - allowed)
    if unknown:
        listing = ", ".join(sorted(allowed)) or "none"
        raise MeasureError(f"{name!r}: unknown parameter {unknown[0]!r} (allowed: {listing})")
    kw: dict[str, object] = {"family": family}
    if "beta" in params:
        kw["beta"] = _number(str(params["beta"]), "beta")
        if not kw["beta"] >= 0:  # type: ignore[operator]
            raise MeasureError(f"{name!r}: beta must be 0 or more")
    if family == "IPrec":
        if "cutoff" not in params:
            raise MeasureError(f"{name!r} needs a recall level, e.g. IPrec@0.5")
        kw["level"] = _recall_level(params["cutoff"], name)
    elif family == "RprecMult":
        if "cutoff" not in params:
            raise MeasureError(f"{name!r} needs a multiple of R, e.g. RprecMult@0.5")
        level = _number(str(params["cutoff"]), f"multiple of R of {name!r}")
        if level < 0:
            raise MeasureError(f"multiple of R of {name!r} must be 0 or more, got {level!r}")
        kw["level"] = level
    elif "cutoff" in params:
        kw["cutoff"] = _as_int_cutoff(params["cutoff"], name)
    elif family == "RelString":
        kw["cutoff"] = RELSTRING_DEFAULT_LENGTH
    elif family in _CUTOFF_REQUIRED:
        raise MeasureError(f"{name!r} needs a cutoff, e.g. {family}@10")
    if "rel" in params:
        kw["rel"] = _number(str(params["rel"]), "rel")
    else:
        kw["rel"] = defaults.rel
    if family == "NumRet" and "rel" in params:
        kw["family"] = "NumRelRet"
    if "judged_only" in params:
        kw["judged_only"] = _as_bool(params["judged_only"], "judged_only")
    elif defaults.judged_only and family not in _SAME_UNDER_J:
        if "judged_only" not in allowed:
            raise MeasureError(f"{name!r} has no judged-only variant (trec_eval -J)")
        kw["judged_only"] = True
    if "top" in params:
        kw["top"] = _number(str(params["top"]), "top")
    else:
        kw["top"] = defaults.top
    if "w_irr" in params:
        kw["w_irr"] = _number(str(params["w_irr"]), "w_irr")
    if "p" in params:
        kw["p"] = _number(str(params["p"]), "p")
        if not 0.0 <= kw["p"] < 1.0:  # type: ignore[operator]
            raise MeasureError(f"{name!r}: p (persistence) must be in [0, 1), got {params['p']!r}")
    if family == "Utility":
        kw["coeffs"] = tuple(
            _number(str(params.get(k, d)), f"utility coefficient {k}")
            for k, d in zip("abcd", DEFAULT_UTILITY, strict=True)
        )
        if "n_docs" in params:
            n_docs = _number(str(params["n_docs"]), "n_docs")
            if not n_docs.is_integer() or n_docs < 0:
                raise MeasureError(f"{name!r}: n_docs must be a whole number >= 0")
            kw["n_docs"] = int(n_docs)
        else:
            kw["n_docs"] = defaults.n_docs
        if kw["coeffs"][3] == 0:  # type: ignore[index]
            kw["n_docs"] = 0  # unused: equal computations compare equal
    if family in GAIN_LEVEL_FAMILIES:
        gain = params.get("gain", "linear")
        gains = params.get("gains")
        if isinstance(gain, tuple):
            gain, gains = "linear", gain
        if gain != "linear":
            raise MeasureError(
                f"{name!r}: gain must be linear or a level:gain map like {{1:1,2:3}}, got {gain!r}"
            )
        if gains is not None:
            if not isinstance(gains, tuple):
                raise MeasureError(f"{name!r}: gains must be a map like {{0:0,1:1,2:3}}")
            for level, _ in gains:
                if level < 0 or not float(level).is_integer():
                    raise MeasureError(
                        f"{name!r}: gain levels are whole labels 0, 1, 2...; got {_fmt(level)}"
                    )
            levels = [level for level, _ in gains]
            if len(set(levels)) != len(levels):
                raise MeasureError(f"{name!r}: a gain level is given twice")
            kw["gains"] = tuple(sorted(dict(gains).items()))
            kw["gain"] = "custom"
    if family in ("nDCG", "sNDCG", "RNDCG"):
        gain = params.get("gain")
        if "dcg" in params:
            dcg = _choice(params["dcg"], "dcg", ("log2", "exp-log2"))
            dcg_gain = "exp" if dcg == "exp-log2" else "linear"
            if gain is not None and gain != dcg_gain:
                raise MeasureError(f"{name!r}: dcg={dcg!r} contradicts gain={gain!r}")
            gain = dcg_gain
            if params.get("discount", "log2") != "log2":
                raise MeasureError(f"{name!r}: dcg={dcg!r} implies discount=log2")
        if isinstance(gain, tuple):
            params = {**params, "gains": gain}
            gain = None
        if "gains" in params:
            gains = params["gains"]
            if not isinstance(gains, tuple):
                raise MeasureError(f"{name!r}: gains must be a map like {{0:0,1:1,2:3}}")
            if gain not in (None, "custom"):
                raise MeasureError(f"{name!r}: give either gain={gain} or a gain map")
            kw["gains"] = tuple(sorted(dict(gains).items()))
            kw["gain"] = "custom"
        else:
            kw["gain"] = _choice(gain if gain is not None else "linear", "gain", GAINS)
        if family == "nDCG":
            kw["discount"] = _choice(params.get("discount", "log2"), "discount", DISCOUNTS)
            kw["ideal"] = _choice(params.get("ideal", "global"), "ideal", IDEALS)
            kw["empty"] = _choice(params.get("empty", "zero"), "empty", EMPTIES)
        elif kw["gain"] == "custom":
            raise MeasureError(f"{name!r}: {family} takes gain=linear or gain=exp")
    # Parameters a family does not use are reset so that equal computations compare equal.
    if kw["family"] in _SAME_UNDER_J:
        kw["judged_only"] = False
    if kw["family"] not in _REL_FAMILIES:
        kw["rel"] = 1.0
    if kw["family"] not in ("RBP", "RBPResid"):
        kw["p"] = DEFAULT_RBP_P
    if not (kw["family"] == "ERR" or (kw["family"] == "nDCG" and kw.get("ideal") == "max")):
        kw["top"] = DEFAULT_SCALE_TOP
    return Measure(**kw, requested=name)  # type: ignore[arg-type]


def _parse_ir(text: str, defaults: Measure) -> list[Measure] | None:
    m = _IR_RE.match(text)
    if not m:
        return None
    ident, params_text, cutoff_text = m.group(1), m.group(2), m.group(3)
    if ident not in _IR_FAMILY:
        return None
    if params_text is None and cutoff_text is None and ident in _TREC_FAMILY:
        return None  # bare "P" or "Rprec": the trec_eval spelling
    family = _IR_FAMILY[ident]
    params: dict[str, object] = {}
    if params_text is not None:
        for item in _split_top(params_text):
            if not item:
                continue
            if "=" not in item:
                raise MeasureError(f"{text!r}: parameters are key=value, got {item!r}")
            key, val = item.split("=", 1)
            key = key.strip()
            if key in params:
                raise MeasureError(f"{text!r}: parameter {key!r} given twice")
            params[key] = _value(val)
    if cutoff_text is not None:
        if "cutoff" in params:
            raise MeasureError(f"{text!r}: cutoff given twice")
        params["cutoff"] = cutoff_text
    return [_build(family, params, text.strip(), defaults)]


def _parse_trec(text: str, defaults: Measure) -> list[Measure] | None:
    stripped = text.strip()
    base, _, rest = stripped.partition(".")
    if base not in _TREC_FAMILY:
        # accept trec_eval's printed spelling too: ndcg_cut_10, P_10, map_cut_5
        m = re.match(r"^(ndcg_cut|map_cut|P|recall|success|relative_P|unj)_(\d+)$", stripped)
        m = m or re.match(r"^(Rprec_mult)_(\d*\.?\d+)$", stripped)
        if not m:
            return None
        base, rest = m.group(1), m.group(2)
    family = _TREC_FAMILY[base]
    out: list[Measure] = []
    if base == "iprec_at_recall":
        levels = [c.strip() for c in rest.split(",")] if rest else IPREC_DEFAULT_LEVELS
        for level in levels:
            built = _build(family, {"cutoff": level}, f"{base}.{level}", defaults)
            out.append(replace(built, trec_style=True))
        return out
    if base == "Rprec_mult":
        texts = [c.strip() for c in rest.split(",")] if rest else RPREC_MULT_DEFAULT_LEVELS
        for text_level in texts:
            built = _build(family, {"cutoff": text_level}, f"{base}.{text_level}", defaults)
            if any(m.level == built.level for m in out):
                raise MeasureError(f"{stripped!r}: multiple {_fmt(built.level)} given twice")  # type: ignore[arg-type]
            out.append(replace(built, trec_style=True))
        return out
    if base in _TREC_CUT:
        if rest:
            cutoffs = [c.strip() for c in rest.split(",")]
        else:
            cutoffs = [str(c) for c in _TREC_DEFAULT_CUTS.get(base, TREC_DEFAULT_CUTOFFS)]
        seen: set[int] = set()
        for c in cutoffs:
            k = _as_int_cutoff(c, stripped)
            if k in seen:
                raise MeasureError(f"{stripped!r}: cutoff {k} given twice")
            seen.add(k)
            spelled = f"{base}.{k}"
            built = _build(family, {"cutoff": k}, spelled, defaults)
            out.append(replace(built, trec_style=True))
        return out
    params: dict[str, object] = {}
    if base == "relstring":
        params["cutoff"] = rest.strip() if rest else RELSTRING_DEFAULT_LENGTH
    elif rest and base == "utility":
        values = [v.strip() for v in rest.split(",")]
        if len(values) != 4:
            raise MeasureError(
                f"{stripped!r}: utility takes four coefficients a,b,c,d (got {len(values)})"
            )
        params.update(zip("abcd", values, strict=True))
    elif rest and base in _TREC_PARAM_TEXT:
        gain_pairs: list[tuple[float, float]] = []
        for item in rest.split(","):
            if "=" not in item:
                raise MeasureError(f"{stripped!r}: parameters are name=value, got {item!r}")
            key, value = (x.strip() for x in item.split("=", 1))
            if key == "p" and base in ("rbp", "rbp_resid"):
                if "p" in params:
                    raise MeasureError(f"{stripped!r}: p given twice")
                params["p"] = value
            elif base == "rbp_resid":
                raise MeasureError(f"{stripped!r}: rbp_resid takes only p=, got {item!r}")
            else:
                if not re.fullmatch(r"[+-]?\d+", key):
                    takes = "p= and level=gain" if base == "rbp" else "level=gain"
                    raise MeasureError(f"{stripped!r}: {base} takes {takes}, got {item!r}")
                gain_pairs.append((_number(key, "gain level"), _number(value, "gain")))
        if gain_pairs:
            params["gains"] = tuple(gain_pairs)
    elif rest:
        if base != "ndcg":
            raise MeasureError(f"trec_eval measure {base!r} takes no parameters (got {stripped!r})")
        gains: list[tuple[float, float]] = []
        for item in rest.split(","):
            if "=" not in item:
                raise MeasureError(f"{stripped!r}: ndcg gains are level=gain, got {item!r}")
            a, b = item.split("=", 1)
            gains.append((_number(a, "gain level"), _number(b, "gain")))
        params["gains"] = tuple(gains)
    built = _build(family, params, stripped, defaults)
    return [replace(built, trec_style=True)]


@lru_cache(maxsize=4096)
def _parse_cached(
    text: str, rel_level: float, scale_top: float, judged_only: bool = False, num_docs: int = 0
) -> tuple[Measure, ...]:
    defaults = Measure(
        "nDCG",
        rel=float(rel_level),
        top=float(scale_top),
        judged_only=bool(judged_only),
        n_docs=int(num_docs),
    )
    if not text or not text.strip():
        raise MeasureError("empty measure name")
    if "(" in text or "@" in text:
        parsed = _parse_ir(text, defaults)
    else:
        parsed = _parse_trec(text, defaults)
        if parsed is None:
            parsed = _parse_ir(text, defaults)
    if parsed is None:
        raise MeasureError(f"unknown measure {text.strip()!r}")
    return tuple(parsed)


def parse_measure(
    name: str | Measure,
    *,
    rel_level: float = 1,
    scale_top: float = DEFAULT_SCALE_TOP,
    judged_only: bool = False,
    num_docs: int = 0,
) -> list[Measure]:
    """Parse one measure name into one or more :class:`Measure` objects.

    A trec_eval name can expand to several measures (``P.5,10`` or bare ``P``, which
    means trec_eval's default cutoffs 5, 10, ..., 1000).  ``rel_level`` is the
    default relevance level of binary measures (trec_eval ``-l``); a measure's own
    ``rel=`` parameter overrides it.  ``scale_top`` is the default top grade of the
    scale, used by ``ideal=max`` and ``ERR``.  ``judged_only=True`` is trec_eval's
    ``-J``: every measure is computed on the ranking without unjudged (and
    negative-labelled) documents, unless its name says ``judged_only=false``;
    ``bpref``, ``num_q``, ``num_rel`` and ``num_rel_ret`` are the same either way, and
    a measure without a judged-only variant (``ERR``, ``Judged``, ``UDCG``...) is an
    error.  ``num_docs`` is trec_eval's ``-N``, the size of the collection, which only
    ``utility`` with a non-zero fourth coefficient reads.  A :class:`Measure` is
    returned as is.

    Raises:
        MeasureError: unknown name, unknown parameter or invalid value.
    """
    if isinstance(name, Measure):
        return [name]
    if not isinstance(name, str):
        raise MeasureError(f"measure names are strings, got {type(name).__name__}")
    return list(
        _parse_cached(name, float(rel_level), float(scale_top), bool(judged_only), int(num_docs))
    )


def parse_measures(
    names: Iterable[str | Measure] | str,
    *,
    rel_level: float = 1,
    scale_top: float = DEFAULT_SCALE_TOP,
    judged_only: bool = False,
    num_docs: int = 0,
) -> list[Measure]:
    """Parse several names; duplicates (same display name and computation) are dropped.

    Two spellings of the same computation (``ndcg_cut.10`` and ``nDCG@10``) are both
    kept because they are reported under different names; they share one
    computation (one canonical name).
    """
    if isinstance(names, (str, Measure)):
        names = [names]
    out: list[Measure] = []
    seen: set[tuple[Measure, str]] = set()
    for name in names:
        for m in parse_measure(
            name,
            rel_level=rel_level,
            scale_top=scale_top,
            judged_only=judged_only,
            num_docs=num_docs,
        ):
            key = (m, m.display)
            if key not in seen:
                seen.add(key)
                out.append(m)
    return out


def measure_info(name: str | Measure, **options: float) -> Measure:
    """Return the single :class:`Measure` for ``name`` (its ``.canonical``, ``.trec_name``...).

    Raises:
        MeasureError: the name is unknown or expands to several measures.
    """
    ms = parse_measure(name, **options)
    if len(ms) != 1:
        raise MeasureError(f"{name!r} expands to {len(ms)} measures; name one cutoff")
    return ms[0]


#: Families whose per-query value is a share or a probability, always within [0, 1].
_UNIT_FAMILIES = frozenset(
    {
        "P", "R", "AP", "RR", "Rprec", "Bpref", "Success", "Judged", "ERR", "IPrec",
        "IPrecAvg", "SetP", "SetR", "SetF", "SetAP", "SetRelP", "RelP", "RBPResid", "Unj",
    }
)  # fmt: skip
#: Normalised-gain families: within [0, 1] when no grade has a negative gain.
_NORMALISED_FAMILIES = frozenset({"nDCG", "nDCGRel", "RLevelNDCG"})


def score_bounds(name: str | Measure) -> tuple[float, float] | None:
    """Return the range every per-query value of a measure lies in, or None if unbounded.

    Shares and probabilities (precision, recall, AP, RR, R-precision, bpref, success,
    ERR, the set measures...) lie in [0, 1], and so does nDCG (any flavour) when no grade
    has a negative gain (custom gains all at least 0; Graded's grades are 0–4). Counts,
    sums of gains, utility, RBP with custom gains, UDCG (irrelevant documents weigh
    negatively) and the standardized nDCGs (not bounded by -1) have no known range: None.
    A mean of per-query values lies in the same range, which is what
    :func:`metrics.engine.ppi.audited_mean` clips its interval to.
    """
    measure = measure_info(name) if isinstance(name, str) else name
    if measure.family in _UNIT_FAMILIES:
        return (0.0, 1.0)
    if measure.family in _NORMALISED_FAMILIES and all(
        gain >= 0 for _, gain in (measure.gains or ())
    ):
        return (0.0, 1.0)
    return None


# trec_eval's measure sets (``-m official``, ``-m all_trec``), as trec_eval lists them.
_OFFICIAL = (
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
)
# trec_eval 10.0's measures in the order it prints them (measures.c, te_trec_measures).
TREC_ORDER = (
    *_OFFICIAL,  # trec_eval's official set is the head of its table
    "relstring",
    "recall",
    "infAP",
    "gm_bpref",
    "Rprec_mult",
    "utility",
    "11pt_avg",
    "binG",
    "G",
    "dcg",
    "ideal_dcg",
    "ndcg",
    "ndcg_rel",
    "Rndcg",
    "ndcg_cut",
    "map_cut",
    "relative_P",
    "success",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
    "yaap",
    "rbp",
    "rbp_resid",
    "unj",
)
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": _OFFICIAL,
    "all_trec": (
        *_OFFICIAL,
        "relstring",
        "recall",
        "unj",
        "rbp",
        "rbp_resid",
        "infAP",
        "gm_bpref",
        "utility",
        "11pt_avg",
        "ndcg",
        "relative_P",
        "Rprec_mult",
        "success",
        "map_cut",
        "ndcg_cut",
        "ndcg_rel",
        "Rndcg",
        "binG",
        "G",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
        "num_nonrel_judged_ret",
    ),
}
# Members of trec_eval's sets that the engine does not compute (docs/measures.md).
TREC_NOT_IMPLEMENTED: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Expanded:
    """Measure names with trec_eval's sets expanded.

    ``names``: what to compute; ``runid``: whether ``runid`` was asked for (it is a
    line, not a measure); ``left_out``: members of a set the engine does not compute.
    """

    names: tuple[str, ...]
    runid: bool
    left_out: tuple[str, ...]


def expand_nicknames(names: Iterable[str]) -> Expanded:
    """Expand ``official`` and ``all_trec`` into their measures; take ``runid`` apart."""
    out: list[str] = []
    left_out: list[str] = []
    runid = False
    for name in names:
        members = NICKNAMES.get(name.strip(), (name,))
        for member in members:
            if member.strip() == "runid":
                runid = True
            elif member in TREC_NOT_IMPLEMENTED and name.strip() in NICKNAMES:
                left_out.append(member)
            else:
                out.append(member)
    return Expanded(tuple(out), runid, tuple(dict.fromkeys(left_out)))


def trec_order(measures: Sequence[Measure]) -> list[Measure]:
    """Return ``measures`` in the order trec_eval prints them.

    Measures asked for by a trec_eval name come first, in trec_eval's order of
    measures and, within one, by cutoff or recall level (trec_eval sorts them); every
    other spelling follows in the order given.
    """
    position = {name: i for i, name in enumerate(TREC_ORDER)}

    def key(item: tuple[int, Measure]) -> tuple[int, int, float, int]:
        i, m = item
        name = m.trec_name if m.trec_style else None
        if name is None:
            return (1, 0, 0.0, i)
        base = name.partition(".")[0]
        sub = m.level if m.level is not None else (m.cutoff or 0)
        return (0, position.get(base, len(TREC_ORDER)), float(sub), i)

    return [m for _, m in sorted(enumerate(measures), key=key)]


def required_depth(measures: Iterable[str | Measure] | str, *, rel_level: float = 1) -> int | None:
    """Return how many top-ranked documents the measures read, or ``None`` for all of them.

    Measures without a cutoff (``map``, ``recip_rank``, ``ndcg``), ``Rprec``,
    ``bpref``, ``num_rel_ret``, ``judged_only`` variants and ``ideal=recall`` NDCG
    read the whole ranking.  ``num_q``, ``num_ret`` and ``num_rel`` need no ranking
    (depth 0).  Rankings stored to this depth give exact values.
    """
    depth = 0
    for m in parse_measures(measures, rel_level=rel_level):
        d = m.depth
        if d is None:
            return None
        depth = max(depth, d)
    return depth
