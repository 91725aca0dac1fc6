/* Phase 2: reading order -- gutters, columns, bands, rows (pdf.order.reading_groups, sort_rows).
 * Part of _pdfcore.c. */
/* ---------------------------------------------------------------- phase 2: reading order */

static int find_gutters(LineSet *s, const IVec *flat, Pair **out, Py_ssize_t *nout) {
    *out = NULL;
    *nout = 0;
    Py_ssize_t n = flat->n;
    if (n < 6) return 0;
    CLine *L = s->lines;
    double left = L[flat->a[0]].x0, right = L[flat->a[0]].x1;
    for (Py_ssize_t i = 1; i < n; i++) {
        CLine *ln = &L[flat->a[i]];
        if (ln->x0 < left) left = ln->x0;
        if (ln->x1 > right) right = ln->x1;
    }
    double width = right - left;
    if (width <= 0) return 0;
    Pair *narrow = PyMem_Malloc((size_t)n * sizeof(Pair));
    double *sizes = PyMem_Malloc((size_t)n * sizeof(double));
    Event *events = PyMem_Malloc((size_t)(2 * n) * sizeof(Event));
    Pair *gaps = PyMem_Malloc((size_t)(n + 1) * sizeof(Pair));
    Pair *gut = PyMem_Malloc((size_t)(n + 1) * sizeof(Pair));
    if (!narrow || !sizes || !events || !gaps || !gut) {
        PyMem_Free(narrow); PyMem_Free(sizes); PyMem_Free(events); PyMem_Free(gaps); PyMem_Free(gut);
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t nn = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        CLine *ln = &L[flat->a[i]];
        sizes[i] = ln->size;
        if (ln->x1 - ln->x0 < 0.6 * width) {
            narrow[nn].a = ln->x0;
            narrow[nn].b = ln->x1;
            nn++;
        }
    }
    Py_ssize_t ngut = 0;
    if (nn >= 6) {
        qsort(narrow, (size_t)nn, sizeof(Pair), cmp_pair);
        qsort(sizes, (size_t)n, sizeof(double), cmp_double);
        double min_gap = 0.6 * sizes[n / 2];
        if (min_gap < 4.0) min_gap = 4.0;
        Py_ssize_t allow = nn / 10;
        Py_ssize_t ne = 0;
        for (Py_ssize_t i = 0; i < nn; i++) { events[ne].x = narrow[i].a; events[ne].d = 1; ne++; }
        for (Py_ssize_t i = 0; i < nn; i++) { events[ne].x = narrow[i].b; events[ne].d = -1; ne++; }
        qsort(events, (size_t)ne, sizeof(Event), cmp_event);
        /* _coverage_gaps */
        Py_ssize_t ngaps = 0, depth = 0;
        int has_start = 0;
        double start = 0;
        for (Py_ssize_t e = 0; e < ne; e++) {
            double x = events[e].x;
            Py_ssize_t before = depth;
            depth += events[e].d;
            if (before > allow && allow >= depth) {
                start = x;
                has_start = 1;
            } else if (before <= allow && allow < depth && has_start) {
                if (x - start >= min_gap) {
                    /* _narrowest(events, start, x) */
                    double lo = start, hi = x, prev_x = lo;
                    Py_ssize_t d = 0, best_depth = (Py_ssize_t)1 << 30;
                    Pair best = {lo, hi};
                    for (Py_ssize_t k = 0; k < ne; k++) {
                        double xx = events[k].x;
                        if (xx > lo && prev_x < hi) {
                            double aa = lo > prev_x ? lo : prev_x, bb = hi < xx ? hi : xx;
                            if (bb > aa && (d < best_depth || (d == best_depth && bb - aa > best.b - best.a))) {
                                best_depth = d;
                                best.a = aa;
                                best.b = bb;
                            }
                        }
                        d += events[k].d;
                        prev_x = xx;
                    }
                    gaps[ngaps++] = best;
                }
                has_start = 0;
            }
        }
        for (Py_ssize_t g = 0; g < ngaps; g++) {
            double ga = gaps[g].a, gb = gaps[g].b;
            Py_ssize_t nl = 0, nr = 0;
            double l_top = 0, l_bot = 0, r_top = 0, r_bot = 0;
            for (Py_ssize_t i = 0; i < n; i++) {
                CLine *ln = &L[flat->a[i]];
                if (ln->x1 <= ga + 1.0) {
                    if (!nl || ln->y1 > l_top) l_top = ln->y1;
                    if (!nl || ln->y0 < l_bot) l_bot = ln->y0;
                    nl++;
                }
                if (ln->x0 >= gb - 1.0) {
                    if (!nr || ln->y1 > r_top) r_top = ln->y1;
                    if (!nr || ln->y0 < r_bot) r_bot = ln->y0;
                    nr++;
                }
            }
            if (nl < 3 || nr < 3 || (double)(nl + nr) < 0.5 * (double)n) continue;
            double overlap = (l_top < r_top ? l_top : r_top) - (l_bot > r_bot ? l_bot : r_bot);
            double hl = l_top - l_bot, hr = r_top - r_bot;
            if (overlap < 0.3 * (hr < hl ? hr : hl)) continue;
            gut[ngut++] = gaps[g];
        }
    }
    PyMem_Free(narrow);
    PyMem_Free(sizes);
    PyMem_Free(events);
    PyMem_Free(gaps);
    if (!ngut) {
        PyMem_Free(gut);
        return 0;
    }
    *out = gut;
    *nout = ngut;
    return 0;
}

/* group_rows + _join_row: the rows of `lines` (top to bottom) joined into single lines */
static int sort_rows(LineSet *s, IVec *lines, IVec *out) {
    Py_ssize_t n = lines->n;
    int sorted = 1;
    for (Py_ssize_t i = 0; i + 1 < n; i++) {
        CLine *a = &s->lines[lines->a[i]], *b = &s->lines[lines->a[i + 1]];
        if ((b->y0 + b->y1) / 2 >= a->y0) { sorted = 0; break; }
    }
    if (n < 2 || sorted) {
        for (Py_ssize_t i = 0; i < n; i++)
            if (ivec_push(out, lines->a[i]) < 0) return -1;
        return 0;
    }
    int *order = PyMem_Malloc((size_t)n * sizeof(int));
    if (!order) { PyErr_NoMemory(); return -1; }
    memcpy(order, lines->a, (size_t)n * sizeof(int));
    if (merge_sort(order, n, less_neg_y1, s->lines) < 0) { PyMem_Free(order); return -1; }
    Py_ssize_t r0 = 0;
    while (r0 < n) {
        CLine *first = &s->lines[order[r0]];
        double top = first->y1, bottom = first->y0;
        Py_ssize_t r1 = r0 + 1;
        while (r1 < n) {
            CLine *ln = &s->lines[order[r1]];
            double overlap = (top < ln->y1 ? top : ln->y1) - (bottom > ln->y0 ? bottom : ln->y0);
            double ha = top - bottom, hb = ln->y1 - ln->y0;
            if (overlap >= 0.4 * (hb < ha ? hb : ha)) r1++;
            else break;
        }
        int *row = order + r0;
        Py_ssize_t m = r1 - r0;
        if (merge_sort(row, m, less_x0, s->lines) < 0) { PyMem_Free(order); return -1; }
        int has_table = 0;
        for (Py_ssize_t k = 0; k < m && !has_table; k++) has_table = s->lines[row[k]].table >= 0;
        if (m == 1 || has_table) {
            for (Py_ssize_t k = 0; k < m; k++)
                if (ivec_push(out, row[k]) < 0) { PyMem_Free(order); return -1; }
        } else {
            int main_i = row[0];
            for (Py_ssize_t k = 1; k < m; k++)
                if (s->lines[row[k]].len > s->lines[main_i].len) main_i = row[k];
            CLine joined;
            CLine *mainl = &s->lines[main_i];
            double msize = mainl->size;
            Py_ssize_t off = s->arena.n;
            double x1 = s->lines[row[0]].x1;
            int start = s->lines[row[0]].start, end = s->lines[row[0]].end;
            for (Py_ssize_t k = 0; k < m; k++) {
                CLine *ln = &s->lines[row[k]];
                if (k) {
                    CLine *prev = &s->lines[row[k - 1]];
                    if (!(ln->x0 - prev->x1 < 0.12 * msize) && ubuf_putc(&s->arena, ' ') < 0) {
                        PyMem_Free(order);
                        return -1;
                    }
                    if (ln->x1 > x1) x1 = ln->x1;
                    if (ln->start < start) start = ln->start;
                    if (ln->end > end) end = ln->end;
                }
                /* the arena may move: copy through an index, not a pointer */
                Py_ssize_t loff = ln->off, llen = ln->len;
                if (ubuf_reserve(&s->arena, llen) < 0) { PyMem_Free(order); return -1; }
                memcpy(s->arena.a + s->arena.n, s->arena.a + loff, (size_t)llen * sizeof(Py_UCS4));
                s->arena.n += llen;
            }
            mainl = &s->lines[main_i];
            joined.x0 = s->lines[row[0]].x0;
            joined.y0 = mainl->y0;
            joined.x1 = x1;
            joined.y1 = mainl->y1;
            joined.size = mainl->size;
            joined.start = start;
            joined.end = end;
            joined.hyphen = s->lines[row[m - 1]].hyphen;
            joined.bold = mainl->bold;
            joined.dropped = 0;
            joined.vertical = 0;
            joined.table = -1;
            joined.off = off;
            joined.len = s->arena.n - off;
            if (add_line(s, &joined) < 0 || ivec_push(out, (int)(s->nlines - 1)) < 0) {
                PyMem_Free(order);
                return -1;
            }
        }
        r0 = r1;
    }
    PyMem_Free(order);
    return 0;
}

static int is_line_numbers(LineSet *s, IVec *g) {
    if (g->n < 5) return 0;
    for (Py_ssize_t i = 0; i < g->n; i++) {
        CLine *ln = &s->lines[g->a[i]];
        if (ln->len < 1 || ln->len > 3) return 0;
        for (Py_ssize_t k = 0; k < ln->len; k++)
            if (!Py_UNICODE_ISDECIMAL(TXT(s, ln)[k])) return 0;
    }
    return 1;
}

typedef struct { IVec *a; Py_ssize_t n, cap; } Groups;

static int groups_add(Groups *g, IVec v) {
    if (GROW(g, a, n, cap, 1, 8) < 0) return -1;
    g->a[g->n++] = v;
    return 0;
}

static void groups_free(Groups *g) {
    for (Py_ssize_t i = 0; i < g->n; i++) ivec_free(&g->a[i]);
    PyMem_Free(g->a);
    g->a = NULL;
    g->n = g->cap = 0;
}

static int add_sorted_group(LineSet *s, Groups *groups, IVec *lines) {
    IVec out = {NULL, 0, 0};
    if (sort_rows(s, lines, &out) < 0 || groups_add(groups, out) < 0) { ivec_free(&out); return -1; }
    return 0;
}

static int reading_groups(LineSet *s, IVec *flat, Groups *groups) {
    Pair *gut;
    Py_ssize_t ng;
    if (find_gutters(s, flat, &gut, &ng) < 0) return -1;
    if (!ng) {
        if (flat->n) return add_sorted_group(s, groups, flat);
        return 0;
    }
    int rc = -1;
    double *mids = PyMem_Malloc((size_t)ng * sizeof(double));
    int *order = PyMem_Malloc((size_t)(flat->n ? flat->n : 1) * sizeof(int));
    IVec *band = PyMem_Calloc((size_t)(ng + 1), sizeof(IVec)); /* columns 0..ng */
    IVec spanning = {NULL, 0, 0};
    if (!mids || !order || !band) { PyErr_NoMemory(); goto done; }
    for (Py_ssize_t g = 0; g < ng; g++) mids[g] = (gut[g].a + gut[g].b) / 2;
    memcpy(order, flat->a, (size_t)flat->n * sizeof(int));
    if (merge_sort(order, flat->n, less_neg_y1, s->lines) < 0) goto done;
    for (Py_ssize_t i = 0; i < flat->n; i++) {
        CLine *ln = &s->lines[order[i]];
        Py_ssize_t col = -2;
        for (Py_ssize_t g = 0; g < ng; g++) {
            double ga = gut[g].a, gb = gut[g].b, mid = mids[g];
            if (ln->x0 >= ga - 1.0 && ln->x1 <= gb + 1.0) { col = -1; break; }
            if (ln->x0 < mid && mid < ln->x1 && mid - ln->x0 > 2 * ln->size && ln->x1 - mid > 2 * ln->size) {
                col = -1;
                break;
            }
        }
        if (col == -2) {
            double c = (ln->x0 + ln->x1) / 2;
            col = 0;
            while (col < ng && !(c < mids[col])) col++; /* bisect_right */
        }
        if (col < 0) {
            for (Py_ssize_t k = 0; k <= ng; k++) {
                if (band[k].n) {
                    if (add_sorted_group(s, groups, &band[k]) < 0) goto done;
                    band[k].n = 0;
                }
            }
            if (ivec_push(&spanning, order[i]) < 0) goto done;
        } else {
            if (spanning.n) {
                if (add_sorted_group(s, groups, &spanning) < 0) goto done;
                spanning.n = 0;
            }
            if (ivec_push(&band[col], order[i]) < 0) goto done;
        }
    }
    for (Py_ssize_t k = 0; k <= ng; k++) {
        if (band[k].n) {
            if (add_sorted_group(s, groups, &band[k]) < 0) goto done;
            band[k].n = 0;
        }
    }
    if (spanning.n && add_sorted_group(s, groups, &spanning) < 0) goto done;
    {
        Py_ssize_t keep = 0;
        for (Py_ssize_t g = 0; g < groups->n; g++) {
            if (is_line_numbers(s, &groups->a[g])) ivec_free(&groups->a[g]);
            else groups->a[keep++] = groups->a[g];
        }
        groups->n = keep;
    }
    rc = 0;
done:
    if (band)
        for (Py_ssize_t k = 0; k <= ng; k++) ivec_free(&band[k]);
    PyMem_Free(band);
    ivec_free(&spanning);
    PyMem_Free(mids);
    PyMem_Free(order);
    PyMem_Free(gut);
    return rc;
}
