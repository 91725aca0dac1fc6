/* Hidden text objects of a page (pdf.hidden.hidden_objects): invisible render modes off images, text
 * off the page, text under 2 pt, transparent or white-on-white text, text under an opaque white or
 * black box drawn after it. Same tests, same double arithmetic and same order as the Python reference.
 * Part of _pdfcore.c. */

#define HID_TEXT 1
#define HID_PATH 2
#define HID_IMAGE 3
#define HID_SHADING 4
#define HID_FORM 5
#define HID_MAX_OBJECTS 20000
#define HID_MIN_FONT_PT 2.0
#define HID_MIN_CONTRAST 1.25
#define HID_BOX_SEGMENTS 6
#define HID_CORNER 0.5
#define HID_COVERED 0.9

typedef struct { float a, b, c, d, e, f; } HMatrix;

typedef struct {
    int kind;
    void *obj;
    double x0, y0, x1, y1;
} HObj;

typedef struct {
    int index, kind, has_fill;
    double x0, y0, x1, y1;
    double r, g, b;
} HUnder;

typedef struct {
    int index;
    double x0, y0, x1, y1;
} HCover;

static double hid_luminance(double v) {
    v /= 255.0;
    return v <= 0.03928 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
}

static double hid_contrast(double r1, double g1, double b1, double r2, double g2, double b2) {
    double la = 0.2126 * hid_luminance(r1) + 0.7152 * hid_luminance(g1) + 0.0722 * hid_luminance(b1);
    double lb = 0.2126 * hid_luminance(r2) + 0.7152 * hid_luminance(g2) + 0.0722 * hid_luminance(b2);
    double hi = la > lb ? la : lb, lo = la > lb ? lb : la;
    return (hi + 0.05) / (lo + 0.05);
}

static int hid_blank(double r, double g, double b) {
    return hid_contrast(r, g, b, 255.0, 255.0, 255.0) < HID_MIN_CONTRAST ||
           hid_contrast(r, g, b, 0.0, 0.0, 0.0) < HID_MIN_CONTRAST;
}

static int hid_inside(double x, double y, double x0, double y0, double x1, double y1) {
    return x0 <= x && x <= x1 && y0 <= y && y <= y1;
}

static int hid_color(int (*getter)(void *, unsigned int *, unsigned int *, unsigned int *, unsigned int *), void *obj,
                     double *rgba) {
    unsigned int r = 0, g = 0, b = 0, a = 0;
    if (!getter(obj, &r, &g, &b, &a)) return 0;
    rgba[0] = (double)r;
    rgba[1] = (double)g;
    rgba[2] = (double)b;
    rgba[3] = (double)a;
    return 1;
}

/* pdf.hidden._rectangle: 1 and the box when the path is one axis-aligned rectangle */
static int hid_rectangle(void *obj, double *box) {
    int count = F.CountSegments(obj);
    HMatrix m;
    if (count < 4 || count > HID_BOX_SEGMENTS || !F.GetMatrix(obj, &m)) return 0;
    double a = m.a, b = m.b, c = m.c, d = m.d, e = m.e, f = m.f;
    double px[HID_BOX_SEGMENTS], py[HID_BOX_SEGMENTS];
    for (int k = 0; k < count; k++) {
        void *seg = F.GetPathSegment(obj, k);
        float x = 0, y = 0;
        if (!seg || F.SegmentType(seg) == 1 || !F.SegmentPoint(seg, &x, &y)) return 0;
        double sx = x, sy = y;
        px[k] = a * sx + c * sy + e;
        py[k] = b * sx + d * sy + f;
    }
    double x0 = px[0], x1 = px[0], y0 = py[0], y1 = py[0];
    for (int k = 1; k < count; k++) {
        if (px[k] < x0) x0 = px[k];
        if (px[k] > x1) x1 = px[k];
        if (py[k] < y0) y0 = py[k];
        if (py[k] > y1) y1 = py[k];
    }
    int corners = 0;
    for (int k = 0; k < count; k++) {
        int left = fabs(px[k] - x0) <= HID_CORNER, right = fabs(px[k] - x1) <= HID_CORNER;
        int low = fabs(py[k] - y0) <= HID_CORNER, high = fabs(py[k] - y1) <= HID_CORNER;
        if (!(left || right) || !(low || high)) return 0;
        corners |= (left ? 1 : 2) << (low ? 0 : 2);
    }
    if (corners != 15) return 0;
    box[0] = x0;
    box[1] = y0;
    box[2] = x1;
    box[3] = y1;
    return 1;
}

/* pdf.hidden._covered */
static int hid_covered(const HObj *t, const HCover *c) {
    double w = t->x1 - t->x0, h = t->y1 - t->y0;
    if (w <= 0.0 || h <= 0.0)
        return hid_inside((t->x0 + t->x1) / 2.0, (t->y0 + t->y1) / 2.0, c->x0, c->y0, c->x1, c->y1);
    double iw = (t->x1 < c->x1 ? t->x1 : c->x1) - (t->x0 > c->x0 ? t->x0 : c->x0);
    double ih = (t->y1 < c->y1 ? t->y1 : c->y1) - (t->y0 > c->y0 ? t->y0 : c->y0);
    return iw > 0.0 && ih > 0.0 && iw * ih >= HID_COVERED * (w * h);
}

static PyObject *core_hidden(PyObject *self, PyObject *args) {
    unsigned long long addr;
    double width, height;
    if (!PyArg_ParseTuple(args, "Kdd", &addr, &width, &height)) return NULL;
    if (!F.bound) {
        PyErr_SetString(PyExc_RuntimeError, "_pdfcore.bind() was not called");
        return NULL;
    }
    void *page = (void *)(uintptr_t)addr;
    int count = F.CountObjects(page);
    if (count > HID_MAX_OBJECTS) count = HID_MAX_OBJECTS;
    if (count < 0) count = 0;
    PyObject *out = PyList_New(0);
    HObj *objs = PyMem_Malloc((size_t)(count ? count : 1) * sizeof(HObj));
    HUnder *unders = PyMem_Malloc((size_t)(count ? count : 1) * sizeof(HUnder));
    HCover *covers = PyMem_Malloc((size_t)(count ? count : 1) * sizeof(HCover));
    if (!out || !objs || !unders || !covers) {
        Py_XDECREF(out);
        PyMem_Free(objs);
        PyMem_Free(unders);
        PyMem_Free(covers);
        return PyErr_NoMemory();
    }
    int texts = 0;
    for (int i = 0; i < count; i++) {
        void *obj = F.GetObject(page, i);
        float l = 0, b = 0, r = 0, t = 0;
        objs[i].obj = obj;
        if (F.GetBounds(obj, &l, &b, &r, &t)) {
            objs[i].kind = F.GetType(obj);
            objs[i].x0 = l;
            objs[i].y0 = b;
            objs[i].x1 = r;
            objs[i].y1 = t;
        } else {
            objs[i].kind = 0;
            objs[i].x0 = objs[i].y0 = objs[i].x1 = objs[i].y1 = 0.0;
        }
        texts += objs[i].kind == HID_TEXT;
    }
    if (!texts) goto done;
    double pbox[4];
    {
        float v[4] = {0, 0, 0, 0};
        if (F.GetCropBox(page, &v[0], &v[1], &v[2], &v[3]) || F.GetMediaBox(page, &v[0], &v[1], &v[2], &v[3])) {
            double x0 = v[0], y0 = v[1], x1 = v[2], y1 = v[3];
            pbox[0] = x0 < x1 ? x0 : x1;
            pbox[1] = y0 < y1 ? y0 : y1;
            pbox[2] = x0 > x1 ? x0 : x1;
            pbox[3] = y0 > y1 ? y0 : y1;
        } else {
            pbox[0] = 0.0;
            pbox[1] = 0.0;
            pbox[2] = width;
            pbox[3] = height;
        }
    }
    int nu = 0, nc = 0;
    for (int i = 0; i < count; i++) {
        HObj *o = &objs[i];
        if (o->kind == HID_PATH) {
            int fill_mode = 0, stroke = 0;
            if (!F.GetDrawMode(o->obj, &fill_mode, &stroke) || fill_mode == 0) continue;
            double fill[4];
            int has_fill = hid_color(F.GetFillColor, o->obj, fill);
            HUnder *u = &unders[nu++];
            u->index = i;
            u->kind = o->kind;
            u->has_fill = has_fill;
            u->x0 = o->x0, u->y0 = o->y0, u->x1 = o->x1, u->y1 = o->y1;
            u->r = has_fill ? fill[0] : 0.0, u->g = has_fill ? fill[1] : 0.0, u->b = has_fill ? fill[2] : 0.0;
            if (has_fill && fill[3] >= 255.0 && hid_blank(fill[0], fill[1], fill[2]) && !F.HasTransparency(o->obj)) {
                double box[4];
                if (hid_rectangle(o->obj, box)) {
                    HCover *c = &covers[nc++];
                    c->index = i;
                    c->x0 = box[0], c->y0 = box[1], c->x1 = box[2], c->y1 = box[3];
                }
            }
        } else if (o->kind == HID_IMAGE || o->kind == HID_SHADING || o->kind == HID_FORM) {
            HUnder *u = &unders[nu++];
            u->index = i;
            u->kind = o->kind;
            u->has_fill = 0;
            u->x0 = o->x0, u->y0 = o->y0, u->x1 = o->x1, u->y1 = o->y1;
            u->r = u->g = u->b = 0.0;
        }
    }
    for (int i = 0; i < count; i++) {
        HObj *o = &objs[i];
        if (o->kind != HID_TEXT || o->x1 <= o->x0 || o->y1 <= o->y0) continue;
        double cx = (o->x0 + o->x1) / 2.0, cy = (o->y0 + o->y1) / 2.0;
        int mode = F.GetRenderMode(o->obj);
        int hidden = 0;
        if (mode == 3 || mode == 7) {
            hidden = 1;
            for (int k = 0; k < nu; k++)
                if (unders[k].kind == HID_IMAGE &&
                    hid_inside(cx, cy, unders[k].x0, unders[k].y0, unders[k].x1, unders[k].y1)) {
                    hidden = 0;
                    break;
                }
        } else if (o->x1 < pbox[0] || o->x0 > pbox[2] || o->y1 < pbox[1] || o->y0 > pbox[3]) {
            hidden = 1;
        } else {
            float size = 0;
            HMatrix m;
            if (F.GetFontSize(o->obj, &size) && F.GetMatrix(o->obj, &m)) {
                double det = (double)m.a * (double)m.d - (double)m.b * (double)m.c;
                if ((double)size * sqrt(fabs(det)) < HID_MIN_FONT_PT) hidden = 1;
            }
            if (!hidden) {
                double color[4];
                int has_color = 0;
                if (mode == 0 || mode == 4) has_color = hid_color(F.GetFillColor, o->obj, color);
                else if (mode == 1 || mode == 5) has_color = hid_color(F.GetStrokeColor, o->obj, color);
                if (has_color) {
                    if (color[3] <= 0.0) {
                        hidden = 1;
                    } else if (hid_contrast(color[0], color[1], color[2], 255.0, 255.0, 255.0) < HID_MIN_CONTRAST) {
                        int backed = 0;
                        for (int k = 0; k < nu; k++) {
                            HUnder *u = &unders[k];
                            if (u->index >= i) break;
                            if (hid_inside(cx, cy, u->x0, u->y0, u->x1, u->y1) &&
                                (!u->has_fill ||
                                 hid_contrast(color[0], color[1], color[2], u->r, u->g, u->b) >= HID_MIN_CONTRAST)) {
                                backed = 1;
                                break;
                            }
                        }
                        hidden = !backed;
                    }
                }
            }
            if (!hidden)
                for (int k = 0; k < nc; k++)
                    if (covers[k].index > i && hid_covered(o, &covers[k])) {
                        hidden = 1;
                        break;
                    }
        }
        if (hidden) {
            PyObject *v = PyLong_FromLong(i);
            if (!v || PyList_Append(out, v) < 0) {
                Py_XDECREF(v);
                Py_CLEAR(out);
                goto done;
            }
            Py_DECREF(v);
        }
    }
done:
    PyMem_Free(objs);
    PyMem_Free(unders);
    PyMem_Free(covers);
    return out;
}
