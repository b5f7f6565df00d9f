/*
 * _ctrec: an optional C reader of clean TREC text (runs and qrels).
 *
 * parse(path, ncols, vcol, threads=2, block=262144, simd=True, ragged=False)
 *     -> (names, codes, words, width, values, last[, starts]) or None
 * parse_buffer(data, ncols, vcol, threads=2, block=262144): the same for the bytes of
 *     a bytes-like object (buffer protocol, C-contiguous)
 * label(docs, keys, values, out): look documents up in a table of live grades (see
 *     ctrec_label below; used by live rescoring)
 *
 * The contract is the one of metrics.engine._textread.read_clean (see its module
 * docstring and metrics/engine/_creader.py): the file is read with pread() in blocks
 * by ``threads`` POSIX threads, each taking the lines that start in one slice of the
 * file, with the GIL released; the slices are then merged in file order.  A buffer
 * (held, and so kept alive and unresizable, for the whole call) is parsed the same
 * way, block by block in place; only the blocks within 64 bytes of its end are
 * copied (the 8- and 64-byte loads may read past a block), so the answers,
 * refusals included, are the file's for the same bytes.
 *
 * Results (all in file order, one row per line):
 *   names   list of bytes: the distinct qids in order of first appearance;
 *   codes   buffer of int32: the index into names of each row's qid;
 *   words   buffer of uint64, rows of ``width`` words: each docno's bytes, NUL-padded;
 *           with ragged=True, ``starts`` is added: when packing the rows (each its own
 *           ceil(len / 8) words, one after the other) takes at most three quarters
 *           of the padded matrix's bytes, counting 4 bytes of ``starts`` a row, the
 *           words are packed and starts (uint32, n + 1 entries: row i is
 *           words[starts[i]:starts[i + 1]]) says where rows begin; otherwise words
 *           is the padded matrix and starts is None;
 *   values  buffer of float64: the ``vcol`` field of each row, correctly rounded
 *           (bit-identical to Python's float(); see parse_number below);
 *   last    bytes: the last field of the last line.
 *
 * None (never a different answer) whenever the text is not "clean": a field that is
 * empty or holds a byte below 33 (tabs, CR, NUL, double or leading spaces, blank
 * lines), a line with another number of fields, a qid starting with '#' (comments),
 * a value that is not a plain or exponent decimal or not finite, a docno longer than
 * 4096 bytes, a line longer than the block, an empty or unreadable file.  The last
 * line may lack its newline.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef _WIN32
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define CTREC_POSIX 1
#endif

#define MAX_DOCNO 4096     /* longest docno accepted (as the numpy reader) */
#define SLACK 64           /* bytes after a block that 8-byte loads may touch */
#define MAX_THREADS 16

/* ------------------------------------------------------------------ growable bits */

typedef struct {
    char *p;
    size_t len, cap;
} Bytes;

static int bytes_add(Bytes *b, const char *src, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) return -1;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
    return 0;
}

/* qid table: open addressing over the names seen, in first-appearance order */
typedef struct {
    Bytes arena;          /* the names' bytes, back to back */
    size_t *off;          /* per code: offset in arena */
    uint32_t *len;        /* per code: length */
    uint64_t *hash;       /* per code: hash */
    int32_t n, cap;       /* codes used / allocated */
    int32_t *slot;        /* hash slots: code, or -1 */
    size_t nslot;         /* power of two */
} Names;

static uint64_t hash_bytes(const char *s, size_t n) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return h ^ (h >> 29);
}

static void names_free(Names *t) {
    free(t->arena.p);
    free(t->off);
    free(t->len);
    free(t->hash);
    free(t->slot);
    memset(t, 0, sizeof *t);
}

static int names_rehash(Names *t, size_t nslot) {
    int32_t *slot = malloc(nslot * sizeof *slot);
    if (!slot) return -1;
    memset(slot, 0xff, nslot * sizeof *slot);
    for (int32_t c = 0; c < t->n; c++) {
        size_t i = (size_t)t->hash[c] & (nslot - 1);
        while (slot[i] >= 0) i = (i + 1) & (nslot - 1);
        slot[i] = c;
    }
    free(t->slot);
    t->slot = slot;
    t->nslot = nslot;
    return 0;
}

/* Return the code of name s[0:n], adding it if new; -1 when out of memory. */
static int32_t names_code(Names *t, const char *s, size_t n) {
    uint64_t h = hash_bytes(s, n);
    if (!t->nslot && names_rehash(t, 64) < 0) return -1;
    size_t i = (size_t)h & (t->nslot - 1);
    for (;;) {
        int32_t c = t->slot[i];
        if (c < 0) break;
        if (t->hash[c] == h && t->len[c] == n && memcmp(t->arena.p + t->off[c], s, n) == 0)
            return c;
        i = (i + 1) & (t->nslot - 1);
    }
    if (t->n == INT32_MAX) return -1;
    if (t->n == t->cap) {
        int32_t cap = t->cap ? (t->cap > INT32_MAX / 2 ? INT32_MAX : t->cap * 2) : 64;
        size_t *off = realloc(t->off, (size_t)cap * sizeof *off);
        if (!off) return -1;
        t->off = off;
        uint32_t *len = realloc(t->len, (size_t)cap * sizeof *len);
        if (!len) return -1;
        t->len = len;
        uint64_t *hash = realloc(t->hash, (size_t)cap * sizeof *hash);
        if (!hash) return -1;
        t->hash = hash;
        t->cap = cap;
    }
    int32_t c = t->n;
    t->off[c] = t->arena.len;
    t->len[c] = (uint32_t)n;
    t->hash[c] = h;
    if (bytes_add(&t->arena, s, n) < 0) return -1;
    t->slot[i] = c;
    t->n++;
    if ((size_t)t->n * 2 > t->nslot && names_rehash(t, t->nslot * 2) < 0) return -1;
    return c;
}

/* ------------------------------------------------------------------ one slice */

typedef struct {
    /* input */
    int fd;
    const char *mem;            /* the input's bytes when parsing a buffer (else NULL) */
    int64_t start, end, size;   /* lines starting in [start, end) of a file of size */
    int ncols, vcol;
    size_t block;
    int simd;                   /* use SSE2 (else the portable word-at-a-time code) */
    /* output */
    int status;                 /* 0 ok, 1 not clean, 2 out of memory, 3 read error */
    size_t n, cap;              /* rows */
    int32_t *codes;
    double *values;
    uint64_t *words;            /* packed: row i at words[starts[i]], ceil(len / 8) words */
    uint32_t *starts;           /* first word of each row (rows, then one more at the end);
                                 * NULL while every row has `fixed` words */
    size_t fixed;               /* the words of every row while starts is NULL (0: no row) */
    size_t nwords, wcap;        /* words used and allocated */
    size_t width;               /* most words of a row */
    Names names;
    Bytes slow;                 /* values parsed later: NUL-terminated tokens */
    int64_t *slow_rows;
    size_t nslow, slow_cap;
    Bytes last;                 /* last field of the last line */
} Part;

static void part_free(Part *w) {
    free(w->codes);
    free(w->values);
    free(w->words);
    free(w->starts);
    names_free(&w->names);
    free(w->slow.p);
    free(w->slow_rows);
    free(w->last.p);
}

static inline uint64_t load64(const char *p) {
    uint64_t w;
    memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    return w;
}

/* Flag (high bit) every byte below 33: exact per byte (no carries cross bytes). */
static inline uint64_t below33(uint64_t w) {
    return ~(((w & 0x7f7f7f7f7f7f7f7fULL) + 0x5f5f5f5f5f5f5f5fULL) | w) & 0x8080808080808080ULL;
}

/* Bit i set when byte i of the 64 at p is below 33 (the separators: space, newline and
 * every byte that makes a line unclean): portable word-at-a-time version. */
static inline uint64_t separators64_swar(const char *p) {
    uint64_t m = 0;
    for (int i = 0; i < 8; i++) {
        uint64_t f = below33(load64(p + 8 * i)) >> 7;
        m |= ((f * 0x0102040810204080ULL) >> 56) << (8 * i);
    }
    return m;
}

#ifdef __SSE2__
#include <emmintrin.h>
/* The same with SSE2 (every x86-64): bytes equal to their minimum with 32. */
static inline uint64_t separators64_sse2(const char *p) {
    const __m128i c32 = _mm_set1_epi8(32);
    uint64_t m = 0;
    for (int i = 0; i < 4; i++) {
        __m128i x = _mm_loadu_si128((const __m128i *)(p + 16 * i));
        __m128i le = _mm_cmpeq_epi8(_mm_min_epu8(x, c32), x);
        m |= (uint64_t)(uint32_t)_mm_movemask_epi8(le) << (16 * i);
    }
    return m;
}
#define HAVE_SIMD 1
#else
#define separators64_sse2 separators64_swar
#define HAVE_SIMD 0
#endif

static inline size_t popcount64(uint64_t x) { /* no libgcc call without -mpopcnt */
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    return (size_t)((x * 0x0101010101010101ULL) >> 56);
}

/* Write the offsets of the separators of buf[from, lim) to out (room for 8 more than
 * their number); return their count.  Set *adjacent when two separators are adjacent
 * or buf[from] is one (an empty field, a blank line, CRLF).  buf must be readable up
 * to lim + 63. */
static inline size_t index_separators_with(const char *buf, size_t from, size_t lim,
                                           uint32_t *out, int *adjacent, const int simd) {
    size_t k = 0;
    uint64_t carry = 1, adj = 0; /* the newline before buf[from] */
    for (size_t at = from; at < lim; at += 64) {
        uint64_t m = simd ? separators64_sse2(buf + at) : separators64_swar(buf + at);
        if (lim - at < 64) m &= (1ULL << (lim - at)) - 1;
        adj |= m & ((m << 1) | carry);
        carry = m >> 63;
        size_t cnt = popcount64(m);
        uint32_t *o = out + k;
        for (int i = 0; i < 8; i++) { /* the usual count at once, without branches */
            o[i] = (uint32_t)(at + (size_t)(m ? __builtin_ctzll(m) : 0));
            m &= m - 1;
        }
        for (size_t i = 8; m; i++) {
            o[i] = (uint32_t)(at + (size_t)__builtin_ctzll(m));
            m &= m - 1;
        }
        k += cnt;
    }
    *adjacent = adj != 0;
    return k;
}

static size_t index_separators(const char *buf, size_t from, size_t lim, uint32_t *out,
                               int *adjacent, int simd) {
    if (simd) return index_separators_with(buf, from, lim, out, adjacent, 1);
    return index_separators_with(buf, from, lim, out, adjacent, 0);
}

/* FIRST[k]: the memory bytes of a word whose k first bytes are 0xff (any byte order). */
static uint64_t FIRST[9];

static void init_first(void) {
    for (int k = 0; k <= 8; k++) {
        unsigned char b[8] = {0};
        memset(b, 0xff, (size_t)k);
        memcpy(&FIRST[k], b, 8);
    }
}

static inline uint64_t raw64(const char *p) {
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

static int grow_rows(Part *w) {
    size_t cap = w->cap ? w->cap * 2 : 4096;
    int32_t *codes = realloc(w->codes, cap * sizeof *codes);
    if (!codes) return -1;
    w->codes = codes;
    double *values = realloc(w->values, cap * sizeof *values);
    if (!values) return -1;
    w->values = values;
    if (w->starts) {
        uint32_t *starts = realloc(w->starts, (cap + 1) * sizeof *starts);
        if (!starts) return -1;
        w->starts = starts;
    }
    w->cap = cap;
    return 0;
}

/* Give the rows so far (all of w->fixed words) their starts, room for cap + 1. */
static int make_starts(Part *w, size_t cap) {
    uint32_t *starts = malloc((cap + 1) * sizeof *starts);
    if (!starts) return -1;
    for (size_t i = 0; i < w->n; i++) starts[i] = (uint32_t)(i * w->fixed);
    w->starts = starts;
    return 0;
}

/* Make room for one more docno (at most MAX_DOCNO / 8 words) in the packed words. */
static int grow_words(Part *w) {
    size_t cap = w->wcap ? w->wcap * 2 : 8192;
    uint64_t *words = realloc(w->words, cap * sizeof *words);
    if (!words) return -1;
    w->words = words;
    w->wcap = cap;
    return 0;
}

/* After the first block (its lines end at file offset upto): size the arrays for the
 * whole slice at the block's rows per byte and words per row, plus 1/16, so they are
 * allocated once (large blocks are mapped: no copies, no heap fragments left behind)
 * instead of doubling from 4,096 rows.  Only a first guess: they still grow past it. */
static int reserve(Part *w, int64_t upto) {
    int64_t done = upto - w->start;
    if (done <= 0 || upto >= w->end) return 0;
    double per_byte = (double)w->n / (double)done;
    double rows = per_byte * (double)(w->end - w->start);
    if (rows > 1e12) return 0;
    size_t cap = (size_t)(rows + rows / 16) + 1024;
    size_t wcap = (size_t)((double)w->nwords / (double)w->n * (double)cap) + MAX_DOCNO / 8;
    if (cap > w->cap) {
        int32_t *codes = realloc(w->codes, cap * sizeof *codes);
        if (!codes) return -1;
        w->codes = codes;
        double *values = realloc(w->values, cap * sizeof *values);
        if (!values) return -1;
        w->values = values;
        if (w->starts) {
            uint32_t *starts = realloc(w->starts, (cap + 1) * sizeof *starts);
            if (!starts) return -1;
            w->starts = starts;
        }
        w->cap = cap;
    }
    if (wcap > w->wcap) {
        uint64_t *words = realloc(w->words, wcap * sizeof *words);
        if (!words) return -1;
        w->words = words;
        w->wcap = wcap;
    }
    return 0;
}

/* memcpy that gives the source's whole pages back to the system as they are copied
 * (the source is freed right after): merging two slices never holds both copies. */
static void copy_release(void *dst, void *src, size_t len) {
    const size_t chunk = (size_t)1 << 22;
    char *d = dst, *s = src;
#ifdef CTREC_POSIX
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)s + page - 1) & ~(page - 1); /* first whole page */
#endif
    for (size_t done = 0; done < len;) {
        size_t n = len - done < chunk ? len - done : chunk;
        memcpy(d + done, s + done, n);
        done += n;
#if defined(CTREC_POSIX) && defined(MADV_DONTNEED)
        uintptr_t hi = ((uintptr_t)s + done) & ~(page - 1);
        if (hi > lo) {
            madvise((void *)lo, hi - lo, MADV_DONTNEED);
            lo = hi;
        }
#endif
    }
}

static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                 1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static inline int is_digit(char c) { return (unsigned char)(c - '0') < 10; }

/* Is [p, e) a number by [+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)? */
static int number_syntax(const char *p, const char *e) {
    if (p < e && (*p == '+' || *p == '-')) p++;
    int digits = 0;
    while (p < e && is_digit(*p)) p++, digits++;
    if (p < e && *p == '.') {
        p++;
        while (p < e && is_digit(*p)) p++, digits++;
    }
    if (!digits) return 0;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < e && (*p == '+' || *p == '-')) p++;
        int exp_digits = 0;
        while (p < e && is_digit(*p)) p++, exp_digits++;
        if (!exp_digits) return 0;
    }
    return p == e;
}

/* Parse [p, e) into *out when it is a plain decimal of <= 15 significant digits and
 * <= 22 fraction digits: mantissa and 10**k are exact doubles, so one IEEE division is
 * the correctly rounded value, the double strtod/float() give.  Return 0 when done,
 * 1 when the token needs the general conversion, -1 when it is not a number. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SWAR_NUMBERS 1
static const uint64_t ZEROS = 0x3030303030303030ULL; /* eight ASCII "0" */
static const uint64_t POW10_INT[9] = {1,      10,      100,      1000,     10000,
                                      100000, 1000000, 10000000, 100000000};

/* Is every byte of the word an ASCII digit? */
static inline int eight_digits_ok(uint64_t w) {
    return ((w & 0xF0F0F0F0F0F0F0F0ULL) | (((w + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) ==
           0x3333333333333333ULL;
}

/* The value of eight ASCII digits, the first in the lowest byte. */
static inline uint64_t eight_digits(uint64_t v) {
    v -= ZEROS;
    v = v * 10 + (v >> 8);
    return (((v & 0x000000FF000000FFULL) * (100 + (1000000ULL << 32))) +
            (((v >> 16) & 0x000000FF000000FFULL) * (1 + (10000ULL << 32)))) >> 32;
}

/* The k low bytes of w moved to the top, below them ASCII zeros (k in 1..8). */
static inline uint64_t right_align(uint64_t w, size_t k) {
    return k == 8 ? w : (w << (8 * (8 - k))) | (ZEROS >> (8 * k));
}
#endif

static inline int parse_number_slow(const char *p, const char *e, double *out);

/* Parse [p, e) into *out when it is a plain decimal of <= 15 significant digits and
 * <= 22 fraction digits: mantissa and 10**k are exact doubles, so one IEEE division is
 * the correctly rounded value, the double strtod/float() give.  Return 0 when done,
 * 1 when the token needs the general conversion.  Tokens of at most 8 integer and 8
 * fraction digits are read eight digits at a time. */
static inline int parse_number(const char *p, const char *e, double *out) {
#ifdef SWAR_NUMBERS
    const char *q = p + (*p == '-' || *p == '+');
    size_t len = (size_t)(e - q);
    if (len && len <= 17) {
        uint64_t w0 = raw64(q) & FIRST[len < 8 ? len : 8];
        uint64_t x = w0 ^ 0x2E2E2E2E2E2E2E2EULL; /* a zero byte where the dot is */
        uint64_t z = (x - 0x0101010101010101ULL) & ~x & 0x8080808080808080ULL;
        size_t a = z ? (size_t)__builtin_ctzll(z) >> 3 : (len > 8 && q[8] == '.') ? 8 : len;
        size_t b = a < len ? len - a - 1 : 0;
        if (a <= 8 && b <= 8 && a + b >= 1 && a + b <= 15) {
            uint64_t iw = a ? right_align(w0, a) : ZEROS;
            uint64_t fw = b ? right_align(raw64(q + a + 1), b) : ZEROS;
            if (eight_digits_ok(iw) && eight_digits_ok(fw)) {
                uint64_t m = eight_digits(iw) * POW10_INT[b] + eight_digits(fw);
                double v = (double)m / POW10[b];
                *out = *p == '-' ? -v : v;
                return 0;
            }
        }
    }
#endif
    return parse_number_slow(p, e, out);
}

/* The same rule, one digit at a time (any length, any byte order). */
static inline int parse_number_slow(const char *p, const char *e, double *out) {
    int neg = 0;
    if (*p == '-') neg = 1, p++;
    else if (*p == '+') p++;
    const char *d0 = p;
    uint64_t m = 0;
    while (p < e && is_digit(*p)) m = m * 10 + (uint64_t)(*p++ - '0');
    size_t digits = (size_t)(p - d0), frac = 0;
    if (p < e && *p == '.') {
        const char *f0 = ++p;
        while (p < e && is_digit(*p)) m = m * 10 + (uint64_t)(*p++ - '0');
        frac = (size_t)(p - f0);
        digits += frac;
    }
    if (p != e || !digits || frac > 22) return 1;
    if (digits > 15) { /* leading zeros are not significant (and left m exact) */
        size_t sig = digits;
        for (const char *q = d0; q < e && (*q == '0' || *q == '.'); q++) sig -= (*q == '0');
        if (sig > 15) return 1;
    }
    double v = (double)m / POW10[frac];
    *out = neg ? -v : v;
    return 0;
}

static int add_slow(Part *w, int64_t row, const char *p, size_t n) {
    if (w->nslow == w->slow_cap) {
        size_t cap = w->slow_cap ? w->slow_cap * 2 : 256;
        int64_t *rows = realloc(w->slow_rows, cap * sizeof *rows);
        if (!rows) return -1;
        w->slow_rows = rows;
        w->slow_cap = cap;
    }
    w->slow_rows[w->nslow++] = row;
    if (bytes_add(&w->slow, p, n) < 0 || bytes_add(&w->slow, "", 1) < 0) return -1;
    return 0;
}

/* Parse the lines of buf[*at, lim) (lim is just past a newline) whose file offset
 * (base + index) is below w->end; seps holds the nsep separator offsets of that text.
 * Return 1 when the slice is finished, 0 to go on, -1 on failure (status set). */
static inline int parse_lines_n(Part *w, const char *buf, size_t *at, const uint32_t *seps,
                                size_t nsep, int64_t base, const int ncols, const int vcol) {
    size_t p = *at;
    size_t k = 0;
    size_t prev_q = 0, prev_len = 0;
    int32_t prev_code = -1;
    size_t last_p = 0, last_n = 0;
    int done = 0, any = 0;
    const int64_t end = w->end;
    while (k < nsep) {
        if (base + (int64_t)p >= end) {
            done = 1;
            break;
        }
        if (k + (size_t)ncols > nsep) goto unclean;
        const uint32_t *s = seps + k;
        /* single spaces between the fields, a newline after the last one (no field is
         * empty: the indexer checked that no two separators are adjacent) */
        unsigned bad = (unsigned char)(buf[s[ncols - 1]] ^ '\n');
        for (int f = 0; f < ncols - 1; f++) bad |= (unsigned char)(buf[s[f]] ^ ' ');
        if (bad || buf[p] == '#') goto unclean;
        if (w->n == w->cap && grow_rows(w) < 0) goto oom;
        size_t row = w->n;
        /* qid */
        size_t len = s[0] - p;
        if (!(prev_code >= 0 && len == prev_len &&
              (len <= 8 ? ((raw64(buf + p) ^ raw64(buf + prev_q)) & FIRST[len]) == 0
                        : memcmp(buf + p, buf + prev_q, len) == 0))) {
            prev_code = names_code(&w->names, buf + p, len);
            if (prev_code < 0) goto oom;
            prev_q = p;
            prev_len = len;
        }
        w->codes[row] = prev_code;
        /* docno */
        const char *d = buf + s[1] + 1;
        len = s[2] - s[1] - 1;
        if (w->nwords + MAX_DOCNO / 8 > w->wcap && grow_words(w) < 0) goto oom;
        if (w->nwords > UINT32_MAX - MAX_DOCNO / 8) goto unclean; /* starts are uint32 */
        size_t nw = len <= 8 ? 1 : (len + 7) >> 3;
        if (!w->starts) { /* fixed-width docnos need no starts (numbers, ClueWeb ids) */
            if (!w->fixed) w->fixed = nw;
            else if (nw != w->fixed && make_starts(w, w->cap) < 0) goto oom;
        }
        if (w->starts) w->starts[row] = (uint32_t)w->nwords;
        if (len <= 8) {
            w->words[w->nwords++] = raw64(d) & FIRST[len];
        } else {
            if (len > MAX_DOCNO) goto unclean;
            if (nw > w->width) w->width = nw;
            uint64_t *dst = w->words + w->nwords;
            size_t j = 0;
            for (; (j + 1) * 8 <= len; j++) dst[j] = raw64(d + 8 * j);
            if (j < nw) dst[j] = raw64(d + 8 * j) & FIRST[len - 8 * j];
            w->nwords += nw;
        }
        /* value */
        const char *v = buf + s[vcol - 1] + 1;
        const char *ve = buf + s[vcol];
        if (parse_number(v, ve, &w->values[row])) {
            if (!number_syntax(v, ve)) goto unclean;
            w->values[row] = 0.0;
            if (add_slow(w, (int64_t)row, v, (size_t)(ve - v)) < 0) goto oom;
        }
        w->n = row + 1;
        last_p = s[ncols - 2] + 1;
        last_n = s[ncols - 1] - last_p;
        any = 1;
        p = s[ncols - 1] + 1;
        k += (size_t)ncols;
    }
    *at = p;
    if (any) {
        w->last.len = 0;
        if (bytes_add(&w->last, buf + last_p, last_n) < 0) goto oom;
    }
    return done;
unclean:
    w->status = 1;
    return -1;
oom:
    w->status = 2;
    return -1;
}

static int parse_lines(Part *w, const char *buf, size_t *at, const uint32_t *seps, size_t nsep,
                       int64_t base) {
    /* constant layouts let the compiler unroll the per-line checks */
    if (w->ncols == 6 && w->vcol == 4) return parse_lines_n(w, buf, at, seps, nsep, base, 6, 4);
    if (w->ncols == 4 && w->vcol == 3) return parse_lines_n(w, buf, at, seps, nsep, base, 4, 3);
    return parse_lines_n(w, buf, at, seps, nsep, base, w->ncols, w->vcol);
}

static void *run_part(void *arg) {
    Part *w = arg;
    size_t block = w->block;
    char *own = malloc(block + SLACK), *buf = own;
    uint32_t *seps = malloc((block + 64 + 8) * sizeof *seps);
    if (!own || !seps) {
        free(own);
        free(seps);
        w->status = 2;
        return NULL;
    }
    memset(own, 0, block + SLACK);
    w->width = 1;
    int64_t base = w->start;   /* file offset of buf[0] */
    int64_t pos = w->start;    /* next byte to read */
    size_t fill = 0;
    int skipping = 0, reserved = 0;
    if (w->start > 0) {        /* begin after the first newline at or after start - 1 */
        base = pos = w->start - 1;
        skipping = 1;
    }
    for (;;) {
        ssize_t got = 0;
        if (pos < w->size) {
            size_t want = block - fill;
            if ((int64_t)want > w->size - pos) want = (size_t)(w->size - pos);
            if (w->mem) got = (ssize_t)want;
            else do {
                got = pread(w->fd, buf + fill, want, (off_t)pos);
            } while (got < 0 && errno == EINTR);
            if (got < 0) {
                w->status = 3;
                break;
            }
        }
        int eof = got == 0;
        pos += got;
        fill += (size_t)got;
        if (w->mem) { /* the block in place, or a copy when the input ends within SLACK */
            if (base + (int64_t)fill + SLACK <= w->size) buf = (char *)w->mem + base;
            else buf = memcpy(own, w->mem + base, fill);
        }
        size_t at = 0;
        if (skipping) {
            const char *nl = memchr(buf, '\n', fill);
            if (!nl) {
                if (eof) break;
                base += (int64_t)fill;
                fill = 0;
                continue;
            }
            at = (size_t)(nl - buf) + 1;
            skipping = 0;
        }
        /* room: SLACK (and buf is own: a buffer's end is copied) */
        if (eof && fill > at && buf[fill - 1] != '\n') buf[fill++] = '\n';
        size_t lim = fill;
        while (lim > at && buf[lim - 1] != '\n') lim--;
        int r = 0;
        if (lim > at) {
            if (buf == own) memset(buf + fill, 0, 64); /* read past the data (masked) */
            int adjacent = 0;
            size_t nsep = index_separators(buf, at, lim, seps, &adjacent, w->simd);
            if (adjacent) {
                w->status = 1;
                break;
            }
            r = parse_lines(w, buf, &at, seps, nsep, base);
            if (r == 0 && !reserved && w->n && reserve(w, base + (int64_t)at) < 0) {
                w->status = 2;
                break;
            }
            reserved = 1;
        }
        if (r < 0 || r == 1 || eof) break;
        if (fill - at >= block) {  /* a line longer than the block */
            w->status = 1;
            break;
        }
        if (!w->mem) memmove(buf, buf + at, fill - at);
        base += (int64_t)at;
        fill -= at;
    }
    free(own);
    free(seps);
    return NULL;
}

/* ------------------------------------------------------------------ result buffers */

typedef struct {
    PyObject_HEAD
    void *ptr;
    Py_ssize_t len;
} Buffer;

static void Buffer_dealloc(Buffer *self) {
    free(self->ptr);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Buffer_getbuffer(Buffer *self, Py_buffer *view, int flags) {
    return PyBuffer_FillInfo(view, (PyObject *)self, self->ptr, self->len, 0, flags);
}

static PyBufferProcs Buffer_as_buffer = {(getbufferproc)Buffer_getbuffer, NULL};

static PyTypeObject BufferType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "metrics.engine._ctrec.Buffer",
    .tp_basicsize = sizeof(Buffer),
    .tp_dealloc = (destructor)Buffer_dealloc,
    .tp_as_buffer = &Buffer_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Memory filled by the C reader (exported through the buffer protocol).",
};

/* Wrap malloc'd memory (taken over, even on failure). */
static PyObject *wrap(void *ptr, size_t len) {
    Buffer *b = PyObject_New(Buffer, &BufferType);
    if (!b) {
        free(ptr);
        return NULL;
    }
    b->ptr = ptr;
    b->len = (Py_ssize_t)len;
    return (PyObject *)b;
}

/* ------------------------------------------------------------------ merge */

/* Append part b to part a (file order); b's codes are mapped to a's table. */
static int merge(Part *a, Part *b) {
    if (!b->n) return 0;
    int32_t *map = malloc((size_t)b->names.n * sizeof *map);
    if (!map) return -1;
    for (int32_t c = 0; c < b->names.n; c++) {
        map[c] = names_code(&a->names, b->names.arena.p + b->names.off[c], b->names.len[c]);
        if (map[c] < 0) {
            free(map);
            return -1;
        }
    }
    size_t n = a->n + b->n;
    size_t nwords = a->nwords + b->nwords;
    if (nwords > UINT32_MAX) { /* starts are uint32: let another reader take it */
        free(map);
        a->status = 1;
        return 0;
    }
    /* b's arrays are released as they are copied (copy_release), each before the next */
    int32_t *codes = realloc(a->codes, n * sizeof *codes);
    if (codes) a->codes = codes;
    double *values = codes ? realloc(a->values, n * sizeof *values) : NULL;
    if (values) a->values = values;
    if (!a->n && !a->starts) a->fixed = b->fixed;
    int ragged = a->starts || b->starts || a->fixed != b->fixed;
    uint32_t *starts = NULL;
    if (values && ragged) {
        if (!a->starts && make_starts(a, n) < 0) starts = NULL;
        else starts = realloc(a->starts, (n + 1) * sizeof *starts);
        if (starts) a->starts = starts;
    }
    if (!values || (ragged && !starts)) {
        free(map);
        return -1;
    }
    a->cap = n;
    for (size_t i = 0; i < b->n; i++) a->codes[a->n + i] = map[b->codes[i]];
    free(map);
    free(b->codes);
    b->codes = NULL;
    if (ragged) {
        for (size_t i = 0; i < b->n; i++)
            a->starts[a->n + i] =
                (b->starts ? b->starts[i] : (uint32_t)(i * b->fixed)) + (uint32_t)a->nwords;
    }
    free(b->starts);
    b->starts = NULL;
    copy_release(a->values + a->n, b->values, b->n * sizeof *b->values);
    free(b->values);
    b->values = NULL;
    uint64_t *words = realloc(a->words, (nwords ? nwords : 1) * sizeof *words);
    if (!words) return -1;
    a->words = words;
    a->wcap = nwords;
    copy_release(a->words + a->nwords, b->words, b->nwords * sizeof *b->words);
    free(b->words);
    b->words = NULL;
    a->nwords = nwords;
    if (b->width > a->width) a->width = b->width;
    size_t token = 0;
    for (size_t i = 0; i < b->nslow; i++) {
        const char *s = b->slow.p + token;
        size_t len = strlen(s);
        if (add_slow(a, b->slow_rows[i] + (int64_t)a->n, s, len) < 0) return -1;
        token += len + 1;
    }
    a->n = n;
    a->last.len = 0;
    return bytes_add(&a->last, b->last.p, b->last.len);
}

/* ------------------------------------------------------------------ parse() */

typedef struct {
    int ncols, vcol, threads, simd, ragged;
    Py_ssize_t block;
} Options;

static int check_options(Options *o) {
    if (o->ncols < 3 || o->vcol < 1 || o->vcol >= o->ncols || o->vcol == 2 || o->block < 16 ||
        (size_t)o->block > ((size_t)1 << 30)) {
        PyErr_SetString(PyExc_ValueError,
                        "need ncols >= 3, 0 < vcol < ncols, vcol != 2, 16 <= block <= 2**30");
        return -1;
    }
    if (o->threads < 1) o->threads = 1;
    if (o->threads > MAX_THREADS) o->threads = MAX_THREADS;
    return 0;
}

#ifdef CTREC_POSIX
static PyObject *parse_input(int fd, const char *mem, int64_t size, Options o);
#endif

static PyObject *ctrec_parse(PyObject *module, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"path", "ncols", "vcol", "threads", "block", "simd", "ragged", NULL};
    PyObject *path = NULL;
    Options o = {0, 0, 2, 1, 0, 1 << 18};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&ii|inpp:parse", kwlist,
                                     PyUnicode_FSConverter, &path, &o.ncols, &o.vcol,
                                     &o.threads, &o.block, &o.simd, &o.ragged))
        return NULL;
    if (check_options(&o) < 0) {
        Py_DECREF(path);
        return NULL;
    }
#ifndef CTREC_POSIX
    Py_DECREF(path);
    Py_RETURN_NONE;
#else
    int fd = open(PyBytes_AS_STRING(path), O_RDONLY | O_CLOEXEC);
    Py_DECREF(path);
    if (fd < 0) Py_RETURN_NONE;
    struct stat st;
    PyObject *result = Py_None;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) Py_INCREF(result);
    else result = parse_input(fd, NULL, (int64_t)st.st_size, o);
    close(fd);
    return result;
#endif
}

static PyObject *ctrec_parse_buffer(PyObject *module, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"data", "ncols", "vcol", "threads", "block", "simd", "ragged", NULL};
    Py_buffer view;
    Options o = {0, 0, 2, 1, 0, 1 << 18};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*ii|inpp:parse_buffer", kwlist, &view,
                                     &o.ncols, &o.vcol, &o.threads, &o.block, &o.simd,
                                     &o.ragged))
        return NULL;
    PyObject *result = Py_None;
    if (check_options(&o) < 0) result = NULL;
#ifdef CTREC_POSIX
    else if (view.len > 0) result = parse_input(-1, view.buf, (int64_t)view.len, o);
#endif
    else Py_INCREF(result);
    PyBuffer_Release(&view);
    return result;
}

#ifdef CTREC_POSIX
/* Parse the size bytes of file fd, or of mem when it is not NULL. */
static PyObject *parse_input(int fd, const char *mem, int64_t size, Options o) {
    int threads = o.threads, ncols = o.ncols, vcol = o.vcol, simd = o.simd;
    Py_ssize_t block = o.block;
    if (size < threads) threads = 1;
    Part parts[MAX_THREADS];
    memset(parts, 0, sizeof parts);
    for (int i = 0; i < threads; i++) {
        parts[i].fd = fd;
        parts[i].mem = mem;
        parts[i].size = size;
        parts[i].start = size * i / threads;
        parts[i].end = size * (i + 1) / threads;
        parts[i].ncols = ncols;
        parts[i].vcol = vcol;
        parts[i].block = (size_t)block;
        parts[i].simd = simd && HAVE_SIMD;
    }
    int started[MAX_THREADS] = {0};
    pthread_t tid[MAX_THREADS];
    Py_BEGIN_ALLOW_THREADS
    for (int i = 1; i < threads; i++)
        started[i] = pthread_create(&tid[i], NULL, run_part, &parts[i]) == 0;
    run_part(&parts[0]);
    for (int i = 1; i < threads; i++) {
        if (started[i]) pthread_join(tid[i], NULL);
        else run_part(&parts[i]);
    }
    Py_END_ALLOW_THREADS

    PyObject *result = NULL;
    Part *a = &parts[0];
    int status = 0;
    for (int i = 0; i < threads; i++)
        if (parts[i].status > status) status = parts[i].status;
    if (status == 2) {
        PyErr_NoMemory();
        goto done;
    }
    if (status) goto none;
    for (int i = 1; i < threads; i++) {
        if (merge(a, &parts[i]) < 0) {
            PyErr_NoMemory();
            goto done;
        }
    }
    if (a->status || !a->n) goto none;
    /* the tokens the fast rule left: Python's own correctly rounded conversion */
    size_t token = 0;
    for (size_t i = 0; i < a->nslow; i++) {
        const char *s = a->slow.p + token;
        char *end = NULL;
        double v = PyOS_string_to_double(s, &end, NULL);
        if (v == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            goto none;
        }
        if (*end || !isfinite(v)) goto none;
        a->values[a->slow_rows[i]] = v;
        token += strlen(s) + 1;
    }
    if (a->cap > a->n) { /* give back the unused rows */
        int32_t *codes = realloc(a->codes, a->n * sizeof *codes);
        if (codes) a->codes = codes;
        double *values = realloc(a->values, a->n * sizeof *values);
        if (values) a->values = values;
        if (a->starts) {
            uint32_t *starts = realloc(a->starts, (a->n + 1) * sizeof *starts);
            if (starts) a->starts = starts;
        }
        a->cap = a->n;
    }
    if (a->starts) a->starts[a->n] = (uint32_t)a->nwords;
    /* Packed rows are kept only where they save a quarter of the padded matrix (URLs);
     * docnos of nearly one width (TREC's, MS MARCO's) are padded in place. */
    size_t padded = a->n * a->width;
    int pad = !o.ragged || 4 * (a->nwords * 8 + (a->n + 1) * 4) > 3 * padded * 8;
    if (a->starts && pad) {
        if (padded > a->wcap) {
            uint64_t *m = realloc(a->words, padded * sizeof *m);
            if (!m) {
                PyErr_NoMemory();
                goto done;
            }
            a->words = m;
            a->wcap = padded;
        }
        /* last row first: row i moves up to i * width, past every earlier row's words */
        for (size_t i = a->n; i-- > 0;) {
            size_t nw = a->starts[i + 1] - a->starts[i];
            uint64_t *dst = a->words + i * a->width;
            memmove(dst, a->words + a->starts[i], nw * sizeof *dst);
            memset(dst + nw, 0, (a->width - nw) * sizeof *dst);
        }
        a->nwords = padded;
    }
    if (a->starts && pad) {
        free(a->starts);
        a->starts = NULL;
    }
    if (a->wcap > a->nwords) {
        uint64_t *words = realloc(a->words, (a->nwords ? a->nwords : 1) * sizeof *words);
        if (words) a->words = words;
        a->wcap = a->nwords;
    }
    PyObject *names = PyList_New(a->names.n);
    if (!names) goto done;
    for (int32_t c = 0; c < a->names.n; c++) {
        PyObject *b =
            PyBytes_FromStringAndSize(a->names.arena.p + a->names.off[c], a->names.len[c]);
        if (!b) {
            Py_DECREF(names);
            goto done;
        }
        PyList_SET_ITEM(names, c, b);
    }
    size_t n = a->n, width = a->width;
    PyObject *codes = wrap(a->codes, n * sizeof(int32_t));
    a->codes = NULL;
    PyObject *words = wrap(a->words, a->nwords * sizeof(uint64_t));
    a->words = NULL;
    PyObject *values = wrap(a->values, n * sizeof(double));
    a->values = NULL;
    PyObject *starts = Py_None;
    if (a->starts) {
        starts = wrap(a->starts, (n + 1) * sizeof(uint32_t));
        a->starts = NULL;
    } else Py_INCREF(starts);
    PyObject *last = PyBytes_FromStringAndSize(a->last.p ? a->last.p : "", (Py_ssize_t)a->last.len);
    if (codes && words && values && last && starts && o.ragged)
        result = Py_BuildValue("(NNNnNNN)", names, codes, words, (Py_ssize_t)width, values, last,
                               starts);
    else if (codes && words && values && last && starts) {
        Py_DECREF(starts);
        result = Py_BuildValue("(NNNnNN)", names, codes, words, (Py_ssize_t)width, values, last);
    } else {
        Py_DECREF(names);
        Py_XDECREF(codes);
        Py_XDECREF(words);
        Py_XDECREF(values);
        Py_XDECREF(last);
        Py_XDECREF(starts);
    }
    goto done;
none:
    result = Py_None;
    Py_INCREF(result);
done:
    for (int i = 0; i < threads; i++) part_free(&parts[i]);
    return result;
}
#endif

/*
 * label(docs, keys, values, out): out[i] = values[j] where keys[j] == docs[i], else NaN.
 *
 * docs: int64, any length; keys: int64, distinct; values: float64, one per key; out:
 * writable float64, one per doc.  All C-contiguous.  An open-addressing hash table of
 * the keys (at least twice their number of slots, a power of two) makes the lookup one
 * or two probes per document, so labelling a query's 100 x 1,000 stored rankings with
 * its few hundred live grades costs well under a millisecond, with the GIL released.
 * Used by live rescoring (metrics/live/rescore.py); numpy's searchsorted is the
 * fallback and gives the same answers (tests/engine/test_creader.py).
 */
static PyObject *ctrec_label(PyObject *module, PyObject *args) {
    (void)module;
    Py_buffer docs = {0}, keys = {0}, values = {0}, out = {0};
    PyObject *result = NULL;
    int64_t *slot_key = NULL;
    int32_t *slot_at = NULL;
    if (!PyArg_ParseTuple(args, "y*y*y*w*", &docs, &keys, &values, &out)) return NULL;
    Py_ssize_t n = docs.len / 8, m = keys.len / 8;
    if (docs.len % 8 || keys.len % 8 || values.len != keys.len || out.len != docs.len) {
        PyErr_SetString(PyExc_ValueError,
                        "label: docs and keys must be int64, values one float64 per key, "
                        "out one float64 per doc");
        goto done;
    }
    if (m > INT32_MAX / 4) {
        PyErr_SetString(PyExc_ValueError, "label: too many keys");
        goto done;
    }
    size_t size = 16;
    while (size < (size_t)m * 2) size <<= 1;
    int shift = 64;
    for (size_t s = size; s > 1; s >>= 1) shift--;
    slot_key = (int64_t *)malloc(size * sizeof(int64_t));
    slot_at = (int32_t *)malloc(size * sizeof(int32_t));
    if (!slot_key || !slot_at) {
        PyErr_NoMemory();
        goto done;
    }
    const int64_t *d = (const int64_t *)docs.buf, *k = (const int64_t *)keys.buf;
    const double *v = (const double *)values.buf;
    double *o = (double *)out.buf;
    Py_BEGIN_ALLOW_THREADS
    /* A 2^15-bit filter (4 KiB, stays in L1) answers most misses without a probe. */
    uint64_t filter[512];
    memset(filter, 0, sizeof filter);
    for (size_t i = 0; i < size; i++) slot_at[i] = -1;
    for (Py_ssize_t j = 0; j < m; j++) {
        uint64_t mix = (uint64_t)k[j] * 0x9E3779B97F4A7C15ULL;
        filter[mix >> 55] |= 1ULL << ((mix >> 49) & 63);
        size_t h = (size_t)(mix >> shift);
        while (slot_at[h] >= 0 && slot_key[h] != k[j]) h = (h + 1) & (size - 1);
        slot_key[h] = k[j];
        slot_at[h] = (int32_t)j;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t mix = (uint64_t)d[i] * 0x9E3779B97F4A7C15ULL;
        if (!((filter[mix >> 55] >> ((mix >> 49) & 63)) & 1)) {
            o[i] = NAN;
            continue;
        }
        size_t h = (size_t)(mix >> shift);
        double found = NAN;
        for (;;) {
            int32_t at = slot_at[h];
            if (at < 0) break;
            if (slot_key[h] == d[i]) {
                found = v[at];
                break;
            }
            h = (h + 1) & (size - 1);
        }
        o[i] = found;
    }
    Py_END_ALLOW_THREADS
    result = Py_None;
    Py_INCREF(result);
done:
    free(slot_key);
    free(slot_at);
    PyBuffer_Release(&docs);
    PyBuffer_Release(&keys);
    PyBuffer_Release(&values);
    PyBuffer_Release(&out);
    return result;
}

#if defined(__GLIBC__)
#include <malloc.h>
#endif

/*
 * hash_packed(flat, starts, mult, out): out[i] = sum_j flat[starts[i] + j] * mult[j]
 * (mod 2**64) over the words of row i, flat[starts[i]:starts[i + 1]].
 *
 * The hash of metrics.engine._strings.hash_words, for packed rows without building
 * their padded matrix.  flat and mult: uint64; starts: uint32, at least len(out) + 1;
 * out: writable uint64.  ValueError when a row lies outside flat or has more words
 * than mult.
 */
static PyObject *ctrec_hash_packed(PyObject *module, PyObject *args) {
    Py_buffer flat, starts, mult, out;
    if (!PyArg_ParseTuple(args, "y*y*y*w*:hash_packed", &flat, &starts, &mult, &out))
        return NULL;
    PyObject *result = NULL;
    size_t n = (size_t)out.len / 8, nf = (size_t)flat.len / 8, nm = (size_t)mult.len / 8;
    if ((size_t)starts.len / 4 < n + 1) {
        PyErr_SetString(PyExc_ValueError, "starts needs len(out) + 1 entries");
        goto done;
    }
    const uint64_t *f = flat.buf, *m = mult.buf;
    const uint32_t *st = starts.buf;
    uint64_t *o = out.buf;
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    for (size_t i = 0; i < n; i++) {
        size_t a = st[i], b = st[i + 1];
        if (b < a || b > nf || b - a > nm) {
            bad = 1;
            break;
        }
        uint64_t h = 0;
        for (size_t j = 0; j < b - a; j++) h += f[a + j] * m[j];
        o[i] = h;
    }
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "a row lies outside flat or is longer than mult");
        goto done;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&flat);
    PyBuffer_Release(&starts);
    PyBuffer_Release(&mult);
    PyBuffer_Release(&out);
    return result;
}

/* mmap_threshold(nbytes): fix glibc's mmap threshold (and a trim threshold of twice it). */
static PyObject *ctrec_mmap_threshold(PyObject *module, PyObject *arg) {
    long nbytes = PyLong_AsLong(arg);
    if (nbytes == -1 && PyErr_Occurred()) return NULL;
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
    if (nbytes > 0 && nbytes <= (1L << 30) && mallopt(M_MMAP_THRESHOLD, (int)nbytes) == 1 &&
        mallopt(M_TRIM_THRESHOLD, (int)(2 * nbytes)) == 1)
        Py_RETURN_TRUE;
#endif
    Py_RETURN_FALSE;
}

static PyMethodDef ctrec_methods[] = {
    {"hash_packed", (PyCFunction)ctrec_hash_packed, METH_VARARGS,
     "hash_packed(flat, starts, mult, out)\n--\n\n"
     "out[i] = sum of flat[starts[i] + j] * mult[j] over row i's words (uint64)."},
    {"mmap_threshold", (PyCFunction)ctrec_mmap_threshold, METH_O,
     "mmap_threshold(nbytes)\n--\n\n"
     "Fix glibc's mmap threshold to nbytes (trim threshold: twice it); True if done."},
    {"parse", (PyCFunction)(void (*)(void))ctrec_parse, METH_VARARGS | METH_KEYWORDS,
     "parse(path, ncols, vcol, threads=2, block=262144, simd=True, ragged=False)\n--\n\n"
     "Read a clean TREC file: (names, codes, words, width, values, last[, starts]) or None."},
    {"parse_buffer", (PyCFunction)(void (*)(void))ctrec_parse_buffer, METH_VARARGS | METH_KEYWORDS,
     "parse_buffer(data, ncols, vcol, threads=2, block=262144, simd=True, ragged=False)\n--\n\n"
     "The same for the bytes of a bytes-like object (C-contiguous)."},
    {"label", (PyCFunction)ctrec_label, METH_VARARGS,
     "label(docs, keys, values, out)\n--\n\n"
     "out[i] = values[j] where keys[j] == docs[i], else NaN (int64 / float64 buffers)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef ctrec_module = {
    PyModuleDef_HEAD_INIT, "_ctrec", "C reader of clean TREC text (see _creader.py).", -1,
    ctrec_methods,
};

PyMODINIT_FUNC PyInit__ctrec(void) {
    init_first();
    if (PyType_Ready(&BufferType) < 0) return NULL;
    PyObject *m = PyModule_Create(&ctrec_module);
    if (!m) return NULL;
#ifdef CTREC_POSIX
    if (PyModule_AddIntConstant(m, "THREADED", 1) < 0 ||
#else
    if (PyModule_AddIntConstant(m, "THREADED", 0) < 0 ||
#endif
        PyModule_AddIntConstant(m, "SIMD", HAVE_SIMD) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
