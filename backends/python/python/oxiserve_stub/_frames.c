/* The stub's hot path in C: an Execute frame's requests (and a BlsResponse's tensors)
 * decoded into pb_utils objects, and the plain responses of a batch encoded for
 * ExecuteDone (and a BLS request's tensors), outputs copied into arena_out; a lane's
 * call and answer frames (lane.py) encoded and decoded. Python's execute_frame.py,
 * response_frames.py, bls.py and lane_calls.py hold the same logic and are used when
 * this module is missing; tests/test_frames.py checks that both agree.
 *
 * Built against the stable ABI of Python 3.11 (`_frames.abi3.so`), so one build loads
 * in every interpreter from 3.11 on; numpy is used only through Python calls and the
 * buffer protocol, so any numpy version works. A lane's caller also waits for its answer
 * here (recv_polling), without the GIL. */

#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define UINT8 2
#define BYTES 13
#define BF16 14
#define NCODES 15

/* What setup() is given: the pb_utils classes, numpy.ndarray, the wire dtypes. */
static PyObject *tensor_type, *request_type, *response_type, *ndarray_type;
static PyObject *wire_np[NCODES];
static Py_ssize_t itemsize[NCODES];

static PyObject *empty_str, *braces_str, *minus_one, *one;

/* Attribute names, interned. */
static PyObject *a_name, *a_dtype, *a_np, *a_raw, *a_dims;
static PyObject *a_request_id, *a_corr, *a_inputs, *a_outputs, *a_model_name,
    *a_model_version, *a_flags, *a_timeout, *a_params, *a_rid, *a_sender, *a_block,
    *a_release_flags, *a_preferred_memory, *a_trace, *a_error;

/* ------------------------------------------------------------------ reading */

typedef struct {
    const uint8_t *b;
    Py_ssize_t len, p;
} Reader;

static int need(Reader *r, Py_ssize_t n) {
    if (n < 0 || r->len - r->p < n) {
        PyErr_SetString(PyExc_ValueError, "frame cut short");
        return -1;
    }
    return 0;
}

static uint64_t le(const uint8_t *b, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = (v << 8) | b[i];
    return v;
}

/* Tensor and output names repeat in every request: decoded once. */
#define NAME_CACHE 64
#define NAME_MAX_LEN 64
static struct {
    Py_ssize_t len;
    char bytes[NAME_MAX_LEN];
    PyObject *str;
} names[NAME_CACHE];
static int n_names;

static PyObject *name_str(const uint8_t *p, Py_ssize_t k) {
    if (k <= NAME_MAX_LEN) {
        for (int i = 0; i < n_names; i++)
            if (names[i].len == k && memcmp(names[i].bytes, p, k) == 0)
                return Py_NewRef(names[i].str);
    }
    PyObject *s = PyUnicode_DecodeUTF8((const char *)p, k, "strict");
    if (s && k <= NAME_MAX_LEN && n_names < NAME_CACHE) {
        names[n_names].len = k;
        memcpy(names[n_names].bytes, p, k);
        names[n_names].str = Py_NewRef(s);
        n_names++;
    }
    return s;
}

/* A u32-length-prefixed UTF-8 string; names go through the cache. */
static PyObject *read_str(Reader *r, int is_name) {
    if (need(r, 4) < 0)
        return NULL;
    Py_ssize_t k = (Py_ssize_t)le(r->b + r->p, 4);
    r->p += 4;
    if (need(r, k) < 0)
        return NULL;
    const uint8_t *s = r->b + r->p;
    r->p += k;
    if (is_name)
        return name_str(s, k);
    return PyUnicode_DecodeUTF8((const char *)s, k, "strict");
}

/* obj.attr = value, stealing value (NULL value: an error already set). */
static int set_steal(PyObject *obj, PyObject *attr, PyObject *value) {
    if (value == NULL)
        return -1;
    int rc = PyObject_SetAttr(obj, attr, value);
    Py_DECREF(value);
    return rc;
}

static PyObject *new_object(PyObject *type) {
    allocfunc alloc = (allocfunc)PyType_GetSlot((PyTypeObject *)type, Py_tp_alloc);
    return alloc((PyTypeObject *)type, 0);
}

/* ------------------------------------------------------------------ decoding */

/* The corr_str, request_id and parameters of most requests: "", "", "{}". */
static const uint8_t NO_STRINGS[14] = {0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, '{', '}'};

static PyObject *value_error(const char *text) {
    PyErr_SetString(PyExc_ValueError, text);
    return NULL;
}

/* One input tensor; r is at its name. */
static PyObject *decode_tensor(Reader *r, PyObject *base, Py_ssize_t base_len,
                               uint64_t block) {
    PyObject *name = read_str(r, 1);
    if (name == NULL)
        return NULL;
    PyObject *t = NULL, *dims = NULL, *arr = NULL;
    if (need(r, 2) < 0)
        goto fail;
    int code = r->b[r->p], ndim = r->b[r->p + 1];
    if (need(r, 18 + 8 * (Py_ssize_t)ndim) < 0)
        goto fail;
    const uint8_t *q = r->b + r->p + 2;
    dims = PyList_New(ndim);
    if (dims == NULL)
        goto fail;
    /* The element count as Python's product gives it; beyond 64 bits it cannot match
     * nbytes, unless a zero dimension makes it 0. */
    __int128 count = 1;
    int huge = 0, empty = 0;
    for (int i = 0; i < ndim; i++) {
        int64_t d = (int64_t)le(q + 8 * i, 8);
        empty |= d == 0;
        if (!huge) {
            count *= d;
            huge = count >= ((__int128)1 << 64) || count <= -((__int128)1 << 64);
        }
        PyObject *v = PyLong_FromLongLong(d);
        if (v == NULL || PyList_SetItem(dims, i, v) < 0)
            goto fail;
    }
    if (empty)
        count = 0;
    uint64_t offset = le(q + 8 * ndim, 8), nbytes = le(q + 8 * ndim + 8, 8);
    r->p += 18 + 8 * (Py_ssize_t)ndim;
    if (code >= NCODES || wire_np[code] == NULL) {
        PyErr_Format(PyExc_ValueError, "bad dtype %d", code);
        goto fail;
    }
    if (base == Py_None) {
        value_error("tensors without a block");
        goto fail;
    }
    __int128 o = (__int128)offset - (__int128)block;
    if (o < 0) { /* (numpy would make a view before its buffer) */
        value_error("tensor before its block");
        goto fail;
    }
    t = new_object(tensor_type);
    if (t == NULL || PyObject_SetAttr(t, a_name, name) < 0 ||
        set_steal(t, a_dtype, PyLong_FromLong(code)) < 0 ||
        PyObject_SetAttr(t, a_dims, dims) < 0)
        goto fail;
    if (code == BYTES) {
        if (o + nbytes > base_len) {
            value_error("tensor outside arena_in");
            goto fail;
        }
        PyObject *lo = PyLong_FromSsize_t((Py_ssize_t)o),
                 *hi = PyLong_FromSsize_t((Py_ssize_t)(o + nbytes));
        PyObject *slice = lo && hi ? PySlice_New(lo, hi, NULL) : NULL;
        Py_XDECREF(lo);
        Py_XDECREF(hi);
        if (slice == NULL)
            goto fail;
        arr = PyObject_GetItem(base, slice);
        Py_DECREF(slice);
        if (arr == NULL || PyObject_SetAttr(t, a_np, Py_None) < 0 ||
            PyObject_SetAttr(t, a_raw, arr) < 0)
            goto fail;
    } else {
        if (huge && !empty) {
            value_error("tensor size does not match its shape");
            goto fail;
        }
        if (count * itemsize[code] != (__int128)nbytes) {
            value_error("tensor size does not match its shape");
            goto fail;
        }
        if (o > INT64_MAX) {
            value_error("tensor outside arena_in");
            goto fail;
        }
        PyObject *off = PyLong_FromLongLong((long long)o);
        if (off == NULL)
            goto fail;
        arr = PyObject_CallFunctionObjArgs(ndarray_type, dims, wire_np[code], base, off,
                                           NULL);
        Py_DECREF(off);
        if (arr == NULL) {
            if (PyErr_ExceptionMatches(PyExc_TypeError)) { /* past the end of the arena */
                PyObject *type, *value, *tb;
                PyErr_Fetch(&type, &value, &tb);
                PyObject *text = value ? PyObject_Str(value) : NULL;
                Py_XDECREF(type);
                Py_XDECREF(value);
                Py_XDECREF(tb);
                if (text) {
                    PyErr_SetObject(PyExc_ValueError, text);
                    Py_DECREF(text);
                }
            }
            goto fail;
        }
        int bf16 = code == BF16;
        if (PyObject_SetAttr(t, a_np, bf16 ? Py_None : arr) < 0 ||
            PyObject_SetAttr(t, a_raw, bf16 ? arr : Py_None) < 0)
            goto fail;
    }
    Py_DECREF(arr);
    Py_DECREF(dims);
    Py_DECREF(name);
    return t;
fail:
    Py_XDECREF(arr);
    Py_XDECREF(dims);
    Py_XDECREF(t);
    Py_DECREF(name);
    return NULL;
}

/* One request; r is at its rid. */
static PyObject *decode_request(Reader *r, PyObject *base, Py_ssize_t base_len,
                                uint64_t block, PyObject *owner, PyObject *model_name) {
    PyObject *corr_str = NULL, *request_id = NULL, *params = NULL, *inputs = NULL,
             *outputs = NULL, *req = NULL;
    if (need(r, 21) < 0)
        return NULL;
    const uint8_t *h = r->b + r->p;
    uint64_t rid = le(h, 8), corr_u64 = le(h + 13, 8);
    uint32_t flags = (uint32_t)le(h + 8, 4);
    int corr_kind = h[12];
    r->p += 21;
    if (r->len - r->p >= (Py_ssize_t)sizeof NO_STRINGS &&
        memcmp(r->b + r->p, NO_STRINGS, sizeof NO_STRINGS) == 0) {
        corr_str = Py_NewRef(empty_str);
        request_id = Py_NewRef(empty_str);
        params = Py_NewRef(braces_str);
        r->p += sizeof NO_STRINGS;
    } else {
        if ((corr_str = read_str(r, 0)) == NULL || (request_id = read_str(r, 0)) == NULL ||
            (params = read_str(r, 0)) == NULL)
            goto fail;
        if (PyUnicode_GetLength(params) == 0) {
            Py_DECREF(params);
            params = Py_NewRef(braces_str);
        }
    }
    if (need(r, 10) < 0)
        goto fail;
    uint64_t timeout = le(r->b + r->p, 8);
    int n_in = (int)le(r->b + r->p + 8, 2);
    r->p += 10;
    if ((inputs = PyList_New(n_in)) == NULL)
        goto fail;
    for (int i = 0; i < n_in; i++) {
        PyObject *t = decode_tensor(r, base, base_len, block);
        if (t == NULL || PyList_SetItem(inputs, i, t) < 0)
            goto fail;
    }
    if (need(r, 2) < 0)
        goto fail;
    int n_out = (int)le(r->b + r->p, 2);
    r->p += 2;
    if ((outputs = PyList_New(n_out)) == NULL)
        goto fail;
    for (int i = 0; i < n_out; i++) {
        PyObject *s = read_str(r, 1);
        if (s == NULL || PyList_SetItem(outputs, i, s) < 0)
            goto fail;
    }
    if (corr_kind > 2) {
        value_error("bad correlation kind");
        goto fail;
    }
    req = new_object(request_type);
    if (req == NULL || PyObject_SetAttr(req, a_request_id, request_id) < 0 ||
        (corr_kind == 2 ? PyObject_SetAttr(req, a_corr, corr_str)
                        : set_steal(req, a_corr, PyLong_FromUnsignedLongLong(corr_u64))) <
            0 ||
        PyObject_SetAttr(req, a_inputs, inputs) < 0 ||
        PyObject_SetAttr(req, a_outputs, outputs) < 0 ||
        PyObject_SetAttr(req, a_model_name, model_name) < 0 ||
        PyObject_SetAttr(req, a_model_version, minus_one) < 0 ||
        set_steal(req, a_flags, PyLong_FromUnsignedLong(flags)) < 0 ||
        set_steal(req, a_timeout, PyLong_FromUnsignedLongLong(timeout)) < 0 ||
        PyObject_SetAttr(req, a_params, params) < 0 ||
        set_steal(req, a_rid, PyLong_FromUnsignedLongLong(rid)) < 0 ||
        PyObject_SetAttr(req, a_sender, Py_None) < 0 ||
        PyObject_SetAttr(req, a_block, owner) < 0 ||
        PyObject_SetAttr(req, a_release_flags, one) < 0 ||
        PyObject_SetAttr(req, a_preferred_memory, Py_None) < 0 ||
        PyObject_SetAttr(req, a_trace, Py_None) < 0)
        goto fail;
    Py_DECREF(corr_str);
    Py_DECREF(request_id);
    Py_DECREF(params);
    Py_DECREF(inputs);
    Py_DECREF(outputs);
    return req;
fail:
    Py_XDECREF(corr_str);
    Py_XDECREF(request_id);
    Py_XDECREF(params);
    Py_XDECREF(inputs);
    Py_XDECREF(outputs);
    Py_XDECREF(req);
    return NULL;
}

/* decode_requests(body, p, n, base, base_len, block, owner, model_name)
 *   -> (requests, p after them) */
static PyObject *decode_requests(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *body, *base, *owner, *model_name;
    Py_ssize_t p, n, base_len;
    unsigned long long block;
    if (!PyArg_ParseTuple(args, "OnnOnKOU", &body, &p, &n, &base, &base_len, &block, &owner,
                          &model_name))
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(body, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    Reader r = {view.buf, view.len, p};
    PyObject *requests = NULL;
    if (p < 0 || p > view.len) {
        value_error("frame cut short");
        goto done;
    }
    if ((requests = PyList_New(0)) == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *req = decode_request(&r, base, base_len, block, owner, model_name);
        if (req == NULL || PyList_Append(requests, req) < 0) {
            Py_XDECREF(req);
            Py_CLEAR(requests);
            goto done;
        }
        Py_DECREF(req);
    }
done:
    PyBuffer_Release(&view);
    if (requests == NULL)
        return NULL;
    return Py_BuildValue("(Nn)", requests, r.p);
}

/* decode_tensors(body, p, end, n, base, base_len, block) -> (tensors, p after them):
 * n input tensors (a BlsResponse's outputs) from position p of body, read no further
 * than end, viewing base (arena_in from `block` on). */
static PyObject *decode_tensors(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *body, *base;
    Py_ssize_t p, end, n, base_len;
    unsigned long long block;
    if (!PyArg_ParseTuple(args, "OnnnOnK", &body, &p, &end, &n, &base, &base_len, &block))
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(body, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    Reader r = {view.buf, end, p};
    PyObject *tensors = NULL;
    if (p < 0 || end < p || end > view.len || n < 0) {
        value_error("frame cut short");
        goto done;
    }
    if ((tensors = PyList_New(n)) == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = decode_tensor(&r, base, base_len, block);
        if (t == NULL || PyList_SetItem(tensors, i, t) < 0) {
            Py_CLEAR(tensors);
            goto done;
        }
    }
done:
    PyBuffer_Release(&view);
    if (tensors == NULL)
        return NULL;
    return Py_BuildValue("(Nn)", tensors, r.p);
}

/* ------------------------------------------------------------------ encoding */

typedef struct {
    char *b;
    Py_ssize_t len, cap;
} Out;

static int put(Out *o, const void *data, Py_ssize_t n) {
    if (o->len + n > o->cap) {
        Py_ssize_t cap = o->cap * 2 + n;
        char *b = PyMem_Realloc(o->b, cap);
        if (b == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        o->b = b;
        o->cap = cap;
    }
    memcpy(o->b + o->len, data, n);
    o->len += n;
    return 0;
}

static void store_le(uint8_t *b, uint64_t v, int n) {
    for (int i = 0; i < n; i++, v >>= 8)
        b[i] = (uint8_t)v;
}

static int put_le(Out *o, uint64_t v, int n) {
    uint8_t b[8];
    store_le(b, v, n);
    return put(o, b, n);
}

/* An output tensor the fast path can send: a C-contiguous array of a plain dtype. */
typedef struct {
    PyObject *name; /* a reference of its own */
    int code;
    Py_buffer view;
    Py_ssize_t rel; /* its offset in the block */
} Plain;

#define MAX_PLAIN 256

/* 1 with the Tensor's array in out->view when the fast path can send it, 0 when it
 * cannot, -1 on an error. */
static int plain(PyObject *t, Plain *out) {
    PyObject *code_obj = PyObject_GetAttr(t, a_dtype);
    if (code_obj == NULL)
        return -1;
    long code = PyLong_AsLong(code_obj);
    Py_DECREF(code_obj);
    if (code == -1 && PyErr_Occurred())
        return -1;
    if (code <= 0 || code >= NCODES || code == BYTES || code == BF16)
        return 0;
    PyObject *arr = PyObject_GetAttr(t, a_np);
    if (arr == NULL)
        return -1;
    if (arr == Py_None || !PyObject_TypeCheck(arr, (PyTypeObject *)ndarray_type)) {
        Py_DECREF(arr);
        return 0;
    }
    int rc = PyObject_GetBuffer(arr, &out->view, PyBUF_C_CONTIGUOUS);
    Py_DECREF(arr);
    if (rc < 0) { /* not contiguous: the Python path copies it */
        PyErr_Clear();
        return 0;
    }
    if (out->view.itemsize != itemsize[code]) {
        PyBuffer_Release(&out->view);
        return 0;
    }
    out->code = (int)code;
    return 1;
}

/* The output tensors the fast path sends in one frame, laid out in one block. */
typedef struct {
    Plain plains[MAX_PLAIN];
    int n;           /* plains in use */
    Py_ssize_t size; /* the block's size so far */
} Layout;

/* Adds the tensors of the list `tensors` (only those named in `requested` when filter)
 * to the layout, in order: how many, -2 when one needs the Python path, -1 on an
 * error. */
static int lay_out(Layout *l, PyObject *tensors, PyObject *requested, int filter) {
    if (!PyList_Check(tensors))
        return -2;
    Py_ssize_t k = PyList_Size(tensors);
    int count = 0;
    for (Py_ssize_t j = 0; j < k; j++) {
        PyObject *t = PyList_GetItem(tensors, j);
        PyObject *name = PyObject_GetAttr(t, a_name);
        if (name == NULL)
            return -1;
        if (filter) {
            int wanted = PySequence_Contains(requested, name);
            if (wanted <= 0) {
                Py_DECREF(name);
                if (wanted < 0)
                    return -1;
                continue;
            }
        }
        if (l->n == MAX_PLAIN) {
            Py_DECREF(name);
            return -2;
        }
        int rc = plain(t, &l->plains[l->n]);
        if (rc <= 0) {
            Py_DECREF(name);
            return rc < 0 ? -1 : -2;
        }
        Plain *pl = &l->plains[l->n++];
        pl->name = name; /* a new reference, released by release_layout */
        pl->rel = l->size;
        Py_ssize_t len = pl->view.len;
        l->size += len ? (len + 63) & ~(Py_ssize_t)63 : 64;
        count++;
    }
    return count;
}

/* Takes the layout's block from alloc(size) and copies the tensors into it: 0 with
 * *block set (NO_BLOCK when there is no tensor), -2 when alloc failed (the Python path
 * reports it), -1 on an error. */
static int fill(Layout *l, PyObject *alloc, uint64_t out_addr, uint64_t out_size,
                uint64_t *block) {
    *block = UINT64_MAX; /* NO_BLOCK */
    if (l->n == 0)
        return 0;
    PyObject *b = PyObject_CallFunction(alloc, "n", l->size);
    if (b == NULL) {
        PyErr_Clear();
        return -2;
    }
    *block = PyLong_AsUnsignedLongLong(b);
    Py_DECREF(b);
    if (PyErr_Occurred())
        return -1;
    if (*block > out_size || out_size - *block < (uint64_t)l->size) {
        value_error("arena_out block out of range");
        return -1;
    }
    for (int i = 0; i < l->n; i++)
        memcpy((char *)(uintptr_t)(out_addr + *block + l->plains[i].rel),
               l->plains[i].view.buf, l->plains[i].view.len);
    return 0;
}

/* The wire descriptors of the layout's tensors [from, from + count) in `block`. */
static int put_tensors(Out *o, Layout *l, int from, int count, uint64_t block) {
    for (int j = from; j < from + count; j++) {
        Plain *pl = &l->plains[j];
        Py_ssize_t k;
        const char *s = PyUnicode_AsUTF8AndSize(pl->name, &k);
        if (s == NULL || put_le(o, k, 4) < 0 || put(o, s, k) < 0)
            return -1;
        uint8_t head[2] = {(uint8_t)pl->code, (uint8_t)pl->view.ndim};
        if (put(o, head, 2) < 0)
            return -1;
        for (int d = 0; d < pl->view.ndim; d++)
            if (put_le(o, (uint64_t)pl->view.shape[d], 8) < 0)
                return -1;
        if (put_le(o, block + pl->rel, 8) < 0 || put_le(o, pl->view.len, 8) < 0)
            return -1;
    }
    return 0;
}

static void release_layout(Layout *l) {
    for (int i = 0; i < l->n; i++) {
        PyBuffer_Release(&l->plains[i].view);
        Py_DECREF(l->plains[i].name);
    }
}

/* The plain responses of a frame laid out for encoding: their outputs in l, counts[i]
 * of them for pair i, the outputs lists held in tensors_of (n_lists references). */
typedef struct {
    Layout l;
    int counts[MAX_PLAIN], n_lists;
    PyObject *tensors_of[MAX_PLAIN];
} Responses;

/* Lays out the plain responses of `pairs` ([(InferenceResponse, requested output
 * names)]) in rs, which release_responses frees whatever this returns: 0, -2 when a
 * response needs the Python path (an error, parameters, BYTES/BF16 or non-array
 * outputs), -1 on an error. */
static int lay_out_responses(Responses *rs, PyObject *pairs) {
    rs->l.n = 0;
    rs->l.size = 0;
    rs->n_lists = 0;
    if (!PyList_Check(pairs)) {
        value_error("pairs must be a list");
        return -1;
    }
    Py_ssize_t n_pairs = PyList_Size(pairs);
    if (n_pairs > MAX_PLAIN)
        return -2;
    for (Py_ssize_t i = 0; i < n_pairs; i++) {
        PyObject *pair = PyList_GetItem(pairs, i);
        if (pair == NULL || !PyTuple_Check(pair) || PyTuple_Size(pair) != 2)
            return -2;
        PyObject *resp = PyTuple_GetItem(pair, 0), *requested = PyTuple_GetItem(pair, 1);
        PyObject *err = PyObject_GetAttr(resp, a_error);
        PyObject *params = err ? PyObject_GetAttr(resp, a_params) : NULL;
        PyObject *outputs = params ? PyObject_GetAttr(resp, a_outputs) : NULL;
        if (outputs == NULL) {
            Py_XDECREF(err);
            Py_XDECREF(params);
            return -1;
        }
        int plain_resp = err == Py_None && PyUnicode_Check(params) &&
                         (PyUnicode_CompareWithASCIIString(params, "{}") == 0 ||
                          PyUnicode_GetLength(params) == 0);
        Py_DECREF(err);
        Py_DECREF(params);
        rs->tensors_of[rs->n_lists++] = outputs;
        if (!plain_resp)
            return -2;
        int filter = PyObject_IsTrue(requested);
        if (filter < 0)
            return -1;
        int rc = rs->counts[i] = lay_out(&rs->l, outputs, requested, filter);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static void release_responses(Responses *rs) {
    release_layout(&rs->l);
    for (int i = 0; i < rs->n_lists; i++)
        Py_DECREF(rs->tensors_of[i]);
}

/* Each laid out response, its tensors in `block`, as response_frames.encode_responses
 * appends them. */
static int put_responses(Out *o, Responses *rs, Py_ssize_t n_pairs, uint64_t block) {
    static const uint8_t ok_head[12] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0};
    for (Py_ssize_t i = 0, from = 0; i < n_pairs; from += rs->counts[i], i++)
        if (put(o, ok_head, sizeof ok_head) < 0 || put_le(o, rs->counts[i], 2) < 0 ||
            put_tensors(o, &rs->l, (int)from, rs->counts[i], block) < 0)
            return -1;
    return 0;
}

/* encode_responses(pairs, alloc, out_addr, out_size) -> bytes, or None when a response
 * needs the Python path (an error, parameters, BYTES/BF16 or non-array outputs).
 * pairs: [(InferenceResponse, requested output names)]. The bytes are `u64 block` and
 * each response, as response_frames.encode_responses appends them; alloc(size) gives
 * the block. */
static PyObject *encode_responses(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *pairs, *alloc;
    unsigned long long out_addr, out_size;
    if (!PyArg_ParseTuple(args, "OOKK", &pairs, &alloc, &out_addr, &out_size))
        return NULL;
    Responses rs;
    PyObject *result = NULL;
    Out o = {NULL, 0, 0};
    uint64_t block;
    int rc = lay_out_responses(&rs, pairs);
    if (rc == 0)
        rc = fill(&rs.l, alloc, out_addr, out_size, &block);
    if (rc == -2)
        result = Py_NewRef(Py_None);
    else if (rc == 0 && put_le(&o, block, 8) == 0 &&
             put_responses(&o, &rs, PyList_Size(pairs), block) == 0)
        result = PyBytes_FromStringAndSize(o.b, o.len);
    release_responses(&rs);
    PyMem_Free(o.b);
    return result;
}

/* encode_tensors(tensors, alloc, out_addr, out_size) -> (block, bytes), or None when a
 * tensor needs the Python path (BYTES/BF16 or not an array). The tensors (a BLS
 * request's inputs) are copied into one arena_out block from alloc(size); the bytes are
 * their `u16` count and wire descriptors. */
static PyObject *encode_tensors(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *tensors, *alloc;
    unsigned long long out_addr, out_size;
    if (!PyArg_ParseTuple(args, "OOKK", &tensors, &alloc, &out_addr, &out_size))
        return NULL;
    Layout l;
    l.n = 0;
    l.size = 0;
    PyObject *result = NULL;
    Out o = {NULL, 0, 0};
    uint64_t block;
    int count = lay_out(&l, tensors, Py_None, 0), rc = count;
    if (count >= 0)
        rc = fill(&l, alloc, out_addr, out_size, &block);
    if (rc == -1)
        goto done;
    if (rc == -2) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    if (put_le(&o, count, 2) < 0 || put_tensors(&o, &l, 0, count, block) < 0)
        goto done;
    PyObject *bytes = PyBytes_FromStringAndSize(o.b, o.len);
    if (bytes != NULL)
        result = Py_BuildValue("(KN)", (unsigned long long)block, bytes);
done:
    release_layout(&l);
    PyMem_Free(o.b);
    return result;
}

/* ------------------------------------------------------------------ lanes */

/* A lane frame (lane.py): the header, `u32 n`, the n bytes of `body`, then the layout's
 * tensors at their offsets (the gaps zeroed); None when it would hold more than
 * max_data bytes of tensors or more than a frame's u32 length counts (the Python path
 * sends it, or fails). */
static PyObject *lane_frame(const Out *body, Layout *l, unsigned int kind,
                            unsigned long long tag, Py_ssize_t max_data) {
    Py_ssize_t total = 20 + body->len + l->size;
    if (l->size > max_data || (uint64_t)(total - 4) > UINT32_MAX)
        return Py_NewRef(Py_None);
    PyObject *frame = PyBytes_FromStringAndSize(NULL, total);
    if (frame == NULL)
        return NULL;
    uint8_t *b = (uint8_t *)PyBytes_AsString(frame);
    store_le(b, (uint64_t)(total - 4), 4);
    store_le(b + 4, kind, 4);
    store_le(b + 8, tag, 8);
    store_le(b + 16, (uint64_t)body->len, 4);
    memcpy(b + 20, body->b, body->len);
    uint8_t *data = b + 20 + body->len;
    memset(data, 0, l->size);
    for (int i = 0; i < l->n; i++)
        memcpy(data + l->plains[i].rel, l->plains[i].view.buf, l->plains[i].view.len);
    return frame;
}

static int put_str(Out *o, PyObject *s) {
    Py_ssize_t k;
    const char *text = PyUnicode_Check(s) ? PyUnicode_AsUTF8AndSize(s, &k) : NULL;
    if (text == NULL)
        return PyErr_Occurred() ? -1 : -2;
    return put_le(o, k, 4) < 0 || put(o, text, k) < 0 ? -1 : 0;
}

/* encode_call(request, kind) -> bytes, or None when the request needs the Python path
 * (BYTES/BF16 or non-array inputs, an output name not a str): the
 * lane call frame of an InferenceRequest that LaneCalls.shape accepted (no flags,
 * correlation id, parameters or timeout), an Execute body of one request whose tensors
 * follow it, as lane_calls.py writes it. */
static PyObject *encode_call(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *request;
    unsigned int kind;
    if (!PyArg_ParseTuple(args, "OI", &request, &kind))
        return NULL;
    Layout l;
    l.n = 0;
    l.size = 0;
    Out o = {NULL, 0, 0};
    PyObject *result = NULL, *outputs = NULL, *request_id = NULL;
    PyObject *inputs = PyObject_GetAttr(request, a_inputs);
    if (inputs == NULL || (outputs = PyObject_GetAttr(request, a_outputs)) == NULL ||
        (request_id = PyObject_GetAttr(request, a_request_id)) == NULL)
        goto done;
    /* block 0, one request; rid 0, no flags, no correlation id (kind 0, 0, "") */
    static const uint8_t head[37] = {0, 0, 0, 0, 0, 0, 0, 0, 1};
    static const uint8_t params[6] = {2, 0, 0, 0, '{', '}'};
    static const uint8_t no_timeout[8] = {0};
    int count = lay_out(&l, inputs, Py_None, 0), rc = count < 0 ? count : 0;
    if (rc == 0 && !PyList_Check(outputs))
        rc = -2;
    if (rc == 0)
        rc = put(&o, head, sizeof head);
    if (rc == 0)
        rc = put_str(&o, request_id);
    if (rc == 0 && (put(&o, params, sizeof params) < 0 ||
                    put(&o, no_timeout, sizeof no_timeout) < 0 || put_le(&o, count, 2) < 0 ||
                    put_tensors(&o, &l, 0, count, 0) < 0 ||
                    put_le(&o, PyList_Size(outputs), 2) < 0))
        rc = -1;
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_Size(outputs); i++)
        rc = put_str(&o, PyList_GetItem(outputs, i));
    if (rc == -2)
        result = Py_NewRef(Py_None);
    else if (rc == 0)
        result = lane_frame(&o, &l, kind, 0, PY_SSIZE_T_MAX);
done:
    release_layout(&l);
    Py_XDECREF(inputs);
    Py_XDECREF(outputs);
    Py_XDECREF(request_id);
    PyMem_Free(o.b);
    return result;
}

/* encode_answer(pairs, kind, tag, max_data) -> bytes, or None when a response needs the
 * Python path (as for encode_responses, or more than max_data bytes of outputs): the
 * lane answer frame of a call's plain responses, an ExecuteDone body whose tensors
 * follow it (block 0: their offsets count from there), as the called process would
 * answer the server with its outputs in arena_out. */
static PyObject *encode_answer(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *pairs;
    unsigned int kind;
    unsigned long long tag;
    Py_ssize_t max_data;
    if (!PyArg_ParseTuple(args, "OIKn", &pairs, &kind, &tag, &max_data))
        return NULL;
    Responses rs;
    PyObject *result = NULL;
    Out o = {NULL, 0, 0};
    static const uint8_t no_error[8] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
    int rc = lay_out_responses(&rs, pairs);
    if (rc == -2)
        result = Py_NewRef(Py_None);
    else if (rc == 0 && put(&o, no_error, sizeof no_error) == 0 &&
             put_le(&o, PyList_Size(pairs), 4) == 0 && put_le(&o, 0, 8) == 0 &&
             put_responses(&o, &rs, PyList_Size(pairs), 0) == 0)
        result = lane_frame(&o, &rs.l, kind, tag, max_data);
    release_responses(&rs);
    PyMem_Free(o.b);
    return result;
}

/* decode_answer(body, data) -> InferenceResponse, or None when the answer needs the
 * Python path (bls._lane_answer: an error, parameters, responses sent apart, anything
 * malformed): the one response of a lane's ExecuteDone answer `body`, its tensors
 * viewing a uint8 array over the answer's `data`. */
static PyObject *decode_answer(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *body, *data;
    if (!PyArg_ParseTuple(args, "OO", &body, &data))
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(body, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    Reader r = {view.buf, view.len, 0};
    PyObject *base = NULL, *tensors = NULL, *resp = NULL;
    /* no error, no message, one response; its block; no error, no message */
    static const uint8_t head[12] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 1, 0, 0, 0};
    static const uint8_t ok[8] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
    if (r.len < 34 || memcmp(r.b, head, 12) != 0 || memcmp(r.b + 20, ok, 8) != 0)
        goto python;
    uint64_t block = le(r.b + 12, 8), k = le(r.b + 28, 4);
    if (!(k == 0 || (k == 2 && r.b[32] == '{' && r.b[33] == '}')))
        goto python; /* parameters (the Python path writes them as the server does) */
    r.p = 32 + (Py_ssize_t)k;
    if (need(&r, 2) < 0) {
        PyErr_Clear();
        goto python;
    }
    Py_ssize_t n = (Py_ssize_t)le(r.b + r.p, 2);
    r.p += 2;
    Py_ssize_t base_len = PyObject_Length(data);
    if (base_len < 0)
        goto done;
    if (base_len == 0)
        base = Py_NewRef(Py_None);
    else if ((base = PyObject_CallFunction(ndarray_type, "(n)OO", base_len, wire_np[UINT8],
                                           data)) == NULL)
        goto done;
    if ((tensors = PyList_New(n)) == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = decode_tensor(&r, base, base_len, block);
        if (t == NULL) {
            PyErr_Clear();
            goto python;
        }
        if (PyList_SetItem(tensors, i, t) < 0)
            goto done;
    }
    if (r.p != r.len)
        goto python;
    resp = new_object(response_type);
    if (resp == NULL || PyObject_SetAttr(resp, a_outputs, tensors) < 0 ||
        PyObject_SetAttr(resp, a_error, Py_None) < 0 ||
        PyObject_SetAttr(resp, a_params, braces_str) < 0 ||
        PyObject_SetAttr(resp, a_block, Py_None) < 0)
        Py_CLEAR(resp);
    goto done;
python:
    resp = Py_NewRef(Py_None);
done:
    Py_XDECREF(tensors);
    Py_XDECREF(base);
    PyBuffer_Release(&view);
    return resp;
}

/* ------------------------------------------------------------------ waiting */

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* recv_polling(fd, buffer, got, want, spin) -> the bytes in buffer now: reads socket fd
 * into buffer[got:] until at least `want` bytes are there (never past the buffer's end),
 * polling (MSG_DONTWAIT, the CPU yielded between tries) for `spin` seconds before it
 * sleeps in recv, without the GIL. Fewer than `want` when the socket closed first;
 * OSError on an error. lane_calls.py's Python loop does the same. */
static PyObject *recv_polling(PyObject *self, PyObject *args) {
    (void)self;
    int fd;
    PyObject *buffer;
    Py_ssize_t got, want;
    double spin;
    if (!PyArg_ParseTuple(args, "iOnnd", &fd, &buffer, &got, &want, &spin))
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(buffer, &view, PyBUF_WRITABLE) < 0)
        return NULL;
    if (got < 0 || want > view.len || got > view.len) {
        PyBuffer_Release(&view);
        return value_error("recv_polling: got or want outside the buffer");
    }
    char *b = view.buf;
    double spin_end = 0;
    int err = 0, polling = spin > 0;
    while (got < want && !err) {
        ssize_t n;
        Py_BEGIN_ALLOW_THREADS
        for (;;) {
            n = recv(fd, b + got, (size_t)(view.len - got), polling ? MSG_DONTWAIT : 0);
            if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
                break;
            if (spin_end == 0)
                spin_end = now() + spin;
            else if (now() >= spin_end)
                polling = 0; /* sleep in the next recv */
            if (polling)
                sched_yield();
        }
        if (n < 0)
            err = errno;
        Py_END_ALLOW_THREADS
        if (n == 0)
            break; /* closed */
        if (n > 0)
            got += n;
        else if (err == EINTR) {
            err = 0;
            if (PyErr_CheckSignals() < 0) {
                PyBuffer_Release(&view);
                return NULL;
            }
        }
    }
    PyBuffer_Release(&view);
    if (err) {
        errno = err;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    return PyLong_FromSsize_t(got);
}

/* ------------------------------------------------------------------ setup */

/* setup(Tensor, InferenceRequest, InferenceResponse, numpy.ndarray, wire dtypes by code
 * (None: unused)) */
static PyObject *setup(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *tensor, *request, *response, *ndarray, *dtypes;
    if (!PyArg_ParseTuple(args, "OOOOO", &tensor, &request, &response, &ndarray, &dtypes))
        return NULL;
    if (!PyType_Check(tensor) || !PyType_Check(request) || !PyType_Check(response) ||
        !PyType_Check(ndarray) || !PyTuple_Check(dtypes) || PyTuple_Size(dtypes) != NCODES)
        return value_error(
            "setup(Tensor, InferenceRequest, InferenceResponse, ndarray, 15 dtypes)");
    for (int i = 0; i < NCODES; i++) {
        PyObject *d = PyTuple_GetItem(dtypes, i);
        Py_CLEAR(wire_np[i]);
        itemsize[i] = 0;
        if (d == Py_None)
            continue;
        PyObject *size = PyObject_GetAttrString(d, "itemsize");
        if (size == NULL)
            return NULL;
        itemsize[i] = PyLong_AsSsize_t(size);
        Py_DECREF(size);
        if (itemsize[i] < 0)
            return NULL;
        wire_np[i] = Py_NewRef(d);
    }
    Py_XDECREF(tensor_type);
    Py_XDECREF(request_type);
    Py_XDECREF(response_type);
    Py_XDECREF(ndarray_type);
    tensor_type = Py_NewRef(tensor);
    request_type = Py_NewRef(request);
    response_type = Py_NewRef(response);
    ndarray_type = Py_NewRef(ndarray);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS, "Gives the module the classes it builds."},
    {"decode_requests", decode_requests, METH_VARARGS,
     "The requests of an Execute body: (requests, position after them)."},
    {"decode_tensors", decode_tensors, METH_VARARGS,
     "Input tensors of a frame: (tensors, position after them)."},
    {"encode_responses", encode_responses, METH_VARARGS,
     "ExecuteDone's block and responses for plain responses, else None."},
    {"encode_tensors", encode_tensors, METH_VARARGS,
     "A BLS request's block and tensor descriptors for plain tensors, else None."},
    {"encode_call", encode_call, METH_VARARGS,
     "A lane call frame for a request of plain tensors, else None."},
    {"encode_answer", encode_answer, METH_VARARGS,
     "A lane answer frame for plain responses, else None."},
    {"decode_answer", decode_answer, METH_VARARGS,
     "The response of a lane's plain answer, else None."},
    {"recv_polling", recv_polling, METH_VARARGS,
     "Reads a socket until enough bytes are there, polling before it sleeps."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_frames", NULL, -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__frames(void) {
#define INTERN(var, text)                                                                   \
    if ((var = PyUnicode_InternFromString(text)) == NULL)                                  \
        return NULL;
    INTERN(a_name, "_name")
    INTERN(a_dtype, "_dtype")
    INTERN(a_np, "_np")
    INTERN(a_raw, "_raw")
    INTERN(a_dims, "_dims")
    INTERN(a_request_id, "_request_id")
    INTERN(a_corr, "_corr")
    INTERN(a_inputs, "_inputs")
    INTERN(a_outputs, "_outputs")
    INTERN(a_model_name, "_model_name")
    INTERN(a_model_version, "_model_version")
    INTERN(a_flags, "_flags")
    INTERN(a_timeout, "_timeout")
    INTERN(a_params, "_params")
    INTERN(a_rid, "_rid")
    INTERN(a_sender, "_sender")
    INTERN(a_block, "_block")
    INTERN(a_release_flags, "_release_flags")
    INTERN(a_preferred_memory, "_preferred_memory")
    INTERN(a_trace, "_trace")
    INTERN(a_error, "_error")
    INTERN(empty_str, "")
    INTERN(braces_str, "{}")
#undef INTERN
    if ((minus_one = PyLong_FromLong(-1)) == NULL || (one = PyLong_FromLong(1)) == NULL)
        return NULL;
    return PyModule_Create(&module);
}
