/* Shared types of the PDF engine: pdfium bindings, character classes (as Python's), growable
 * arrays, lines, blocks, the LineSet object and a stable merge sort. Part of _pdfcore.c (one
 * translation unit). */
#ifndef RAGWRIGHT_PDFCORE_COMMON_H
#define RAGWRIGHT_PDFCORE_COMMON_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

typedef struct { float left, top, right, bottom; } RectF;

static struct {
    int (*CountChars)(void *);
    int (*GetText)(void *, int, int, unsigned short *);
    int (*GetLooseCharBox)(void *, int, RectF *);
    int (*GetFontWeight)(void *, int);
    float (*GetCharAngle)(void *, int);
    unsigned int (*GetUnicode)(void *, int);
    unsigned long (*GetFontInfo)(void *, int, void *, unsigned long, int *);
    int (*CountObjects)(void *);
    void *(*GetObject)(void *, int);
    int (*GetType)(void *);
    int (*GetBounds)(void *, float *, float *, float *, float *);
    int (*CountSegments)(void *);
    int (*ImagePixelSize)(void *, unsigned int *, unsigned int *);
    /* hidden text (hidden.c) */
    int (*GetCropBox)(void *, float *, float *, float *, float *);
    int (*GetMediaBox)(void *, float *, float *, float *, float *);
    int (*GetFillColor)(void *, unsigned int *, unsigned int *, unsigned int *, unsigned int *);
    int (*GetStrokeColor)(void *, unsigned int *, unsigned int *, unsigned int *, unsigned int *);
    int (*HasTransparency)(void *);
    int (*GetDrawMode)(void *, int *, int *);
    void *(*GetPathSegment)(void *, int);
    int (*SegmentPoint)(void *, float *, float *);
    int (*SegmentType)(void *);
    int (*GetMatrix)(void *, void *);
    int (*GetRenderMode)(void *);
    int (*GetFontSize)(void *, float *);
    int bound;
} F;

/* ---------------------------------------------------------------- character classes (as Python's) */

static int is_space(Py_UCS4 c) { return Py_UNICODE_ISSPACE(c); }
static int is_alnum(Py_UCS4 c) { return Py_UNICODE_ISALNUM(c); }
static int is_word(Py_UCS4 c) { return Py_UNICODE_ISALNUM(c) || c == '_'; }

static int is_rtl(Py_UCS4 c) {
    return (c >= 0x0590 && c <= 0x08ff) || (c >= 0xfb1d && c <= 0xfdff) || (c >= 0xfe70 && c <= 0xfefc);
}

static int is_cjk(Py_UCS4 c) {
    return (c >= 0x3040 && c <= 0x30ff) || (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x4e00 && c <= 0x9fff) ||
           (c >= 0xac00 && c <= 0xd7af) || (c >= 0xff00 && c <= 0xffef) || (c >= 0x3000 && c <= 0x303f);
}

static int is_control(Py_UCS4 c) {
    return c <= 0x08 || (c >= 0x0b && c <= 0x1f) || c == 0x7f || (c >= 0xe000 && c <= 0xf8ff);
}

static int is_bullet_glyph(Py_UCS4 c) {
    switch (c) {
    case 0x2022: case 0x25cf: case 0x25cb: case 0x25e6: case 0x25aa: case 0x25a0:
    case 0x25a1: case 0x2023: case 0x25ba: case 0x25b8: case 0x2713: case 0x2714:
        return 1;
    default:
        return 0;
    }
}

static int is_sentence_end(Py_UCS4 c) {
    return c == '.' || c == '!' || c == '?' || c == ':' || c == ';' || c == 0x3002 || c == 0xff01 || c == 0xff1f;
}

/* ---------------------------------------------------------------- growable arrays */

/* Grow the array *slot points to (a pointer field, holding a, with capacity *cap elements of elem bytes)
 * to hold need elements, doubling from first: 0, or -1 with MemoryError set and the array untouched.
 * The moved pointer is stored with memcpy, whatever the field's element type. */
static int grow_into(void *slot, void *a, Py_ssize_t *cap, size_t elem, Py_ssize_t need, Py_ssize_t first) {
    Py_ssize_t c = *cap ? *cap : first;
    while (c < need) c *= 2;
    void *moved = PyMem_Realloc(a, (size_t)c * elem);
    if (!moved) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(slot, &moved, sizeof(moved));
    *cap = c;
    return 0;
}

/* room for more elements in the array field a of *v, whose length and capacity are the fields n, cap */
#define GROW(v, a, n, cap, more, first)                                                                 \
    (((v)->n + (more) <= (v)->cap)                                                                      \
         ? 0                                                                                            \
         : grow_into((void *)&(v)->a, (void *)(v)->a, &(v)->cap, sizeof(*(v)->a), (v)->n + (more), (first)))

typedef struct { Py_UCS4 *a; Py_ssize_t n, cap; } UBuf;

static int ubuf_reserve(UBuf *b, Py_ssize_t extra) { return GROW(b, a, n, cap, extra, 256); }

static int ubuf_put(UBuf *b, const Py_UCS4 *s, Py_ssize_t n) {
    if (ubuf_reserve(b, n) < 0) return -1;
    memcpy(b->a + b->n, s, (size_t)n * sizeof(Py_UCS4));
    b->n += n;
    return 0;
}

static int ubuf_putc(UBuf *b, Py_UCS4 c) { return ubuf_put(b, &c, 1); }

typedef struct { int *a; Py_ssize_t n, cap; } IVec;

static int ivec_push(IVec *v, int x) {
    if (GROW(v, a, n, cap, 1, 16) < 0) return -1;
    v->a[v->n++] = x;
    return 0;
}

static void ivec_free(IVec *v) { PyMem_Free(v->a); v->a = NULL; v->n = v->cap = 0; }

/* ---------------------------------------------------------------- lines */

typedef struct {
    double x0, y0, x1, y1, size;
    int start, end;
    char hyphen, bold, dropped, vertical;
    int table;           /* >= 0: a stand-in for page.tables[table] (its Markdown as text), else -1 */
    Py_ssize_t off, len; /* text in the arena */
} CLine;

/* a block of the page in reading order; text is the block's text, stripped (empty blocks are not kept) */
typedef struct {
    PyObject *text;    /* stripped; empty blocks are kept (a table's caption is looked up beside it) */
    PyObject *caption; /* the unstripped text when it reads like a table caption ("Table 3"), else NULL */
    double size, top;
    int table;               /* >= 0: the block is page.tables[table] */
    char list_item, heading; /* heading: 0 none, 1 by size, 2 by bold (pdf.elements._heading_kind) */
} CBlock;

typedef struct {
    PyObject_HEAD
    CBlock *blocks;
    Py_ssize_t nblocks, bcap;
    Py_UCS4 *text; /* the page text, one code point per pdfium character */
    Py_ssize_t nchars;
    CLine *lines;
    Py_ssize_t nlines, cap, page_lines; /* page_lines: lines of the page; later ones are joined rows */
    UBuf arena;
} LineSet;

static int add_line(LineSet *s, const CLine *ln) {
    if (GROW(s, lines, nlines, cap, 1, 64) < 0) return -1;
    s->lines[s->nlines++] = *ln;
    return 0;
}

#define TXT(s, ln) ((s)->arena.a + (ln)->off)

/* ---------------------------------------------------------------- stable merge sort of indices */

typedef int (*LessFn)(const void *ctx, int a, int b);

static int merge_sort(int *a, Py_ssize_t n, LessFn less, const void *ctx) {
    if (n < 2) return 0;
    int *tmp = PyMem_Malloc((size_t)n * sizeof(int));
    if (!tmp) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t width = 1; width < n; width *= 2) {
        for (Py_ssize_t lo = 0; lo < n; lo += 2 * width) {
            Py_ssize_t mid = lo + width < n ? lo + width : n;
            Py_ssize_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            Py_ssize_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = less(ctx, a[j], a[i]) ? a[j++] : a[i++];
            while (i < mid) tmp[k++] = a[i++];
            while (j < hi) tmp[k++] = a[j++];
        }
        memcpy(a, tmp, (size_t)n * sizeof(int));
    }
    PyMem_Free(tmp);
    return 0;
}

static int less_neg_y1(const void *ctx, int a, int b) {
    const CLine *L = ctx;
    return -L[a].y1 < -L[b].y1;
}

static int less_x0(const void *ctx, int a, int b) {
    const CLine *L = ctx;
    return L[a].x0 < L[b].x0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct { double x; int d; } Event;

static int cmp_event(const void *a, const void *b) {
    const Event *p = a, *q = b;
    if (p->x != q->x) return (p->x > q->x) - (p->x < q->x);
    return (p->d > q->d) - (p->d < q->d);
}

typedef struct { double a, b; } Pair;

static int cmp_pair(const void *a, const void *b) {
    const Pair *p = a, *q = b;
    if (p->a != q->a) return (p->a > q->a) - (p->a < q->a);
    return (p->b > q->b) - (p->b < q->b);
}

static PyTypeObject LineSetType;

#endif
