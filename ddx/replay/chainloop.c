/* The loop of ddx/replay/chain.py: a whole float64 sum of an elementwise chain, forward and
   backward, in one pass over blocks of a few hundred elements, with no Python between the ops.

   A program (made by chain.py from the op table's `chain` formulas) is a list of registers
   and instructions. A register is an input array (a binding, or a constant of the whole
   shape), a number, or a block buffer; a number, and a buffer computed from numbers only,
   hold one value (stride 0). Each instruction is one IEEE operation of numpy's (+ - * / and
   negation, on doubles, rounded once: the same bits as numpy's loops, whatever the order
   of the elements), or SUM, which feeds a block to ATen's cascade sum, or OUT, which copies
   a block of a gradient out.

   SUM is ATen's vectorized_inner_sum for one contiguous row of float64 below GRAIN_SIZE
   (aten/src/ATen/native/cpu/SumKernel.cpp, as ddx/ops/kernels_sumsmall.py computes it):
   rows of 4 vectors of 4 lanes into multi_row_sum's 4 levels (a level flushed every 16
   rows), the vectors past the last whole row into the first vector, the 4 vectors added,
   then from zero the elements past the last vector, then the lanes.

   A register may also be a leaf's gradient array itself, where the program computes it in place.

   The build (hatch_build.py) compiles this with -ffp-contract=off: no fused multiply-adds.
   A floating-point event (division by zero, overflow, an invalid operation) or a total that
   is not finite returns None, and the caller replays the ordinary way, which reports it. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <fenv.h>
#include <math.h>
#include <string.h>

#define BLOCK 512 /* elements per block: a multiple of 16 (one row of 4 vectors) */
#define LANES 16
#define MAX_INPUTS 64
#define STATIC_TEMPS 64
#define MAX_REGS 512

enum { OP_ADD = 0, OP_SUB = 1, OP_MUL = 2, OP_DIV = 3, OP_NEG = 4, OP_SUM = 5, OP_OUT = 6,
       OP_FUSE = 7, OP_SUM_OF = 8 };
enum { REG_INPUT = 0, REG_NUMBER = 1, REG_BUFFER = 2, REG_ONE = 3, REG_OUTPUT = 4 };

typedef struct {
    double acc[4][LANES];
    Py_ssize_t rows;   /* whole rows fed so far */
    Py_ssize_t whole;  /* the rows multi_row_sum reads: n / 16 */
    double rest[LANES];
    int nrest;
} Cascade;

static double temps_static[STATIC_TEMPS * BLOCK];

/* The loops in AVX2's wider vectors where the CPU has them: the same roundings (no FMA, see
   the top), about twice the elements per cycle. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define WIDE __attribute__((target_clones("avx2", "default")))
#else
#define WIDE
#endif
#if defined(__GNUC__)
#define INLINE static inline __attribute__((always_inline))
#else
#define INLINE static inline
#endif

/* The sum's rows: y's values, or (with op >= 0) those of y op z, made as they are added. */
#define ROW(k) (op < 0 ? y[k] : op == OP_ADD ? y[k] + z[k] : op == OP_SUB ? y[k] - z[k] \
                : op == OP_MUL ? y[k] * z[k] : y[k] / z[k])

INLINE void feed(Cascade *c, const double *restrict y, const double *restrict z, const int op,
                 Py_ssize_t lo, Py_ssize_t m) {
    Py_ssize_t end = lo + m, split = c->whole * LANES;
    Py_ssize_t stop = end < split ? end : split;
    Py_ssize_t at = lo;
    for (; at < stop; at += LANES, y += LANES, z += LANES) {
        for (int k = 0; k < LANES; k++) c->acc[0][k] += ROW(k);
        c->rows++;
        if ((c->rows & 15) == 0) { /* a whole step: flush the levels (level_power 4) */
            for (int j = 1; j < 4; j++) {
                for (int k = 0; k < LANES; k++) {
                    c->acc[j][k] += c->acc[j - 1][k];
                    c->acc[j - 1][k] = 0.0;
                }
                if ((c->rows & ((Py_ssize_t)15 << (4 * j))) != 0) break;
            }
        }
    }
    for (int k = 0; at < end; at++, k++) c->rest[c->nrest++] = ROW(k);
}

static double finish(Cascade *c, Py_ssize_t n) {
    double *a = c->acc[0];
    for (int j = 1; j < 4; j++)
        for (int k = 0; k < LANES; k++) a[k] += c->acc[j][k];
    Py_ssize_t vectors = n / 4, r = 0;
    Py_ssize_t extra = vectors - c->whole * 4; /* row_sum: vectors past the last row */
    for (Py_ssize_t e = 0; e < extra; e++, r += 4)
        for (int l = 0; l < 4; l++) a[l] += c->rest[r + l];
    for (int v = 1; v < 4; v++)
        for (int l = 0; l < 4; l++) a[l] += a[4 * v + l];
    double s = 0.0;
    for (; r < c->nrest; r++) s += c->rest[r]; /* the elements past the last vector */
    for (int l = 0; l < 4; l++) s += a[l];
    return s + 0.0; /* (the output starts at zero) */
}

#define MANY(kind) ((kind) == REG_INPUT || (kind) == REG_BUFFER || (kind) == REG_OUTPUT)

#define BINARY(NAME, OPER)                                                                    \
    INLINE void NAME(double *restrict d, const double *restrict a, const double *restrict b, \
                     Py_ssize_t m, int sa, int sb) {                                          \
        if (sa && sb) {                                                                       \
            for (Py_ssize_t i = 0; i < m; i++) d[i] = a[i] OPER b[i];                         \
        } else if (sa) {                                                                      \
            const double y = b[0];                                                            \
            for (Py_ssize_t i = 0; i < m; i++) d[i] = a[i] OPER y;                            \
        } else if (sb) {                                                                      \
            const double x = a[0];                                                            \
            for (Py_ssize_t i = 0; i < m; i++) d[i] = x OPER b[i];                            \
        } else {                                                                              \
            d[0] = a[0] OPER b[0];                                                            \
        }                                                                                     \
    }

/* -a, or with kind + 2 a copy of a (OUT) */
INLINE void op_neg(double *restrict d, const double *restrict a, Py_ssize_t m, int kind) {
    if (kind == 1) {
        for (Py_ssize_t i = 0; i < m; i++) d[i] = -a[i];
    } else if (kind == 0) {
        d[0] = -a[0];
    } else if (kind == 3) {
        memcpy(d, a, m * sizeof(double));
    } else {
        for (Py_ssize_t i = 0; i < m; i++) d[i] = a[0];
    }
}

/* d = (a op1 b) op2 c, or c op2 (a op1 b): two roundings, as two instructions make them
   (no FMA), without storing and loading the first result. how = op1 + 4 op2 + 16 order. */
#define FUSED(OP1, OP2)                                                                       \
    if (how >> 4) {                                                                           \
        for (Py_ssize_t i = 0; i < m; i++) d[i] = c[i] OP2 (a[i] OP1 b[i]);                   \
    } else {                                                                                  \
        for (Py_ssize_t i = 0; i < m; i++) d[i] = (a[i] OP1 b[i]) OP2 c[i];                   \
    }
#define FUSED_WITH(OP1)                                                                       \
    switch ((how >> 2) & 3) {                                                                 \
    case OP_ADD: FUSED(OP1, +) break;                                                         \
    case OP_SUB: FUSED(OP1, -) break;                                                         \
    case OP_MUL: FUSED(OP1, *) break;                                                         \
    default: FUSED(OP1, /) break;                                                             \
    }

INLINE void op_fused(double *restrict d, const double *restrict a, const double *restrict b,
                     const double *restrict c, Py_ssize_t m, int how) {
    switch (how & 3) {
    case OP_ADD: FUSED_WITH(+) break;
    case OP_SUB: FUSED_WITH(-) break;
    case OP_MUL: FUSED_WITH(*) break;
    default: FUSED_WITH(/) break;
    }
}

BINARY(op_add, +)
BINARY(op_sub, -)
BINARY(op_mul, *)
BINARY(op_div, /)

/* The program on every block, then the sum's last additions. */
WIDE static double execute(const int *kinds, int nregs, const int *instr, int ninstr,
                           Py_ssize_t n, double *const *in, double *const *out,
                           const double *numbers, double *temps) {
    double *ptr[MAX_REGS];
    int stride[MAX_REGS];
    Cascade c;
    memset(&c, 0, sizeof c);
    c.whole = n / LANES;
    for (Py_ssize_t lo = 0; lo < n; lo += BLOCK) {
        Py_ssize_t m = n - lo < BLOCK ? n - lo : BLOCK;
        for (int r = 0; r < nregs; r++) {
            int kind = kinds[2 * r], idx = kinds[2 * r + 1];
            if (kind == REG_INPUT) {
                ptr[r] = in[idx] + lo;
                stride[r] = 1;
            } else if (kind == REG_NUMBER) {
                ptr[r] = (double *)numbers + idx;
                stride[r] = 0;
            } else if (kind == REG_OUTPUT) { /* (a gradient made in place) */
                ptr[r] = out[idx] + lo;
                stride[r] = 1;
            } else {
                ptr[r] = temps + (Py_ssize_t)idx * BLOCK;
                stride[r] = kind == REG_BUFFER;
            }
        }
        for (int s = 0; s < ninstr; s++) {
            const int *ins = instr + 4 * s;
            int d = ins[1], a = ins[2], b = ins[3];
            switch (ins[0]) {
            case OP_ADD: op_add(ptr[d], ptr[a], ptr[b], m, stride[a], stride[b]); break;
            case OP_SUB: op_sub(ptr[d], ptr[a], ptr[b], m, stride[a], stride[b]); break;
            case OP_MUL: op_mul(ptr[d], ptr[a], ptr[b], m, stride[a], stride[b]); break;
            case OP_DIV: op_div(ptr[d], ptr[a], ptr[b], m, stride[a], stride[b]); break;
            case OP_NEG: op_neg(ptr[d], ptr[a], m, stride[a]); break;
            case OP_SUM: feed(&c, ptr[a], ptr[a], -1, lo, m); break;
            case OP_OUT: op_neg(out[d] + lo, ptr[a], m, stride[a] + 2); break;
            case OP_SUM_OF: /* (d: the op) */
                switch (d) {
                case OP_ADD: feed(&c, ptr[a], ptr[b], OP_ADD, lo, m); break;
                case OP_SUB: feed(&c, ptr[a], ptr[b], OP_SUB, lo, m); break;
                case OP_MUL: feed(&c, ptr[a], ptr[b], OP_MUL, lo, m); break;
                case OP_DIV: feed(&c, ptr[a], ptr[b], OP_DIV, lo, m); break;
                }
                break;
            case OP_FUSE: {
                const int *more = instr + 4 * ++s;
                op_fused(ptr[d], ptr[a], ptr[b], ptr[more[1]], m, more[0]);
                break;
            }
            }
        }
    }
    return finish(&c, n);
}

static int get_array(PyObject *obj, Py_buffer *view, Py_ssize_t n, int writable) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return -1;
    if (view->itemsize != 8 || view->len != n * 8 || view->format == NULL ||
        strcmp(view->format, "d") != 0) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "a float64 array of the program's size");
        return -1;
    }
    return 0;
}

/* run(program, n, inputs, numbers, outs) -> the total, or None (see the top of the file).
   program: int32 values: nregs, ninstrs, then (kind, index) per register, then
   (op, dst, a, b) per instruction; numbers: float64 values; inputs, outs: tuples of
   C-contiguous float64 arrays of n elements. */
static PyObject *run(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5 || !PyTuple_Check(args[2]) || !PyTuple_Check(args[4])) {
        PyErr_SetString(PyExc_TypeError, "run(program, n, inputs, numbers, outs)");
        return NULL;
    }
    Py_ssize_t n = PyLong_AsSsize_t(args[1]);
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (n < 1) {
        PyErr_SetString(PyExc_ValueError, "at least one element");
        return NULL;
    }
    Py_buffer prog, nums;
    if (PyObject_GetBuffer(args[0], &prog, PyBUF_SIMPLE) < 0) return NULL;
    if (PyObject_GetBuffer(args[3], &nums, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&prog);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t nin = PyTuple_GET_SIZE(args[2]), nout = PyTuple_GET_SIZE(args[4]);
    Py_buffer views[2 * MAX_INPUTS];
    Py_ssize_t got = 0;
    double *temps = NULL;
    const int *code = (const int *)prog.buf;
    const double *numbers = (const double *)nums.buf;
    Py_ssize_t ncode = prog.len / 4;
    if (nin > MAX_INPUTS || nout > MAX_INPUTS || ncode < 2) goto bad;
    int nregs = code[0], ninstr = code[1];
    if (nregs <= 0 || nregs > MAX_REGS || ninstr <= 0 || ncode != 2 + 2 * (Py_ssize_t)nregs + 4 * (Py_ssize_t)ninstr)
        goto bad;
    for (; got < nin + nout; got++) {
        PyObject *arr = got < nin ? PyTuple_GET_ITEM(args[2], got)
                                  : PyTuple_GET_ITEM(args[4], got - nin);
        if (get_array(arr, &views[got], n, got >= nin) < 0) goto done;
    }
    const int *kinds = code + 2, *instr = code + 2 + 2 * nregs;
    Py_ssize_t nbuffers = 0;
    for (int r = 0; r < nregs; r++) {
        int kind = kinds[2 * r], idx = kinds[2 * r + 1];
        if (kind == REG_BUFFER || kind == REG_ONE) {
            if (idx < 0 || idx >= 4 * MAX_REGS) goto bad;
            if (idx >= nbuffers) nbuffers = idx + 1;
        } else if (kind == REG_INPUT) {
            if (idx < 0 || idx >= nin) goto bad;
        } else if (kind == REG_NUMBER) {
            if (idx < 0 || (Py_ssize_t)idx >= nums.len / 8) goto bad;
        } else if (kind == REG_OUTPUT) {
            if (idx < 0 || idx >= nout) goto bad;
        } else {
            goto bad;
        }
    }
    for (int s = 0; s < ninstr; s++) {
        const int *ins = instr + 4 * s;
        int op = ins[0];
        if (op < 0 || op > OP_SUM_OF || ins[2] < 0 || ins[2] >= nregs) goto bad;
        if (op == OP_FUSE) { /* (d, a, b), then (how, c, 0, 0): arrays only */
            if (s + 1 >= ninstr || ins[1] < 0 || ins[1] >= nregs || ins[3] < 0 ||
                ins[3] >= nregs)
                goto bad;
            const int *more = ins + 4;
            if (more[0] < 0 || more[0] >= 32 || more[1] < 0 || more[1] >= nregs) goto bad;
            if (!MANY(kinds[2 * ins[2]]) || !MANY(kinds[2 * ins[3]]) ||
                !MANY(kinds[2 * more[1]]) || kinds[2 * ins[1]] < REG_BUFFER ||
                !MANY(kinds[2 * ins[1]]))
                goto bad;
            s++;
            continue;
        }
        if (op == OP_SUM_OF) {
            if (ins[1] < 0 || ins[1] > OP_DIV || ins[3] < 0 || ins[3] >= nregs ||
                !MANY(kinds[2 * ins[2]]) || !MANY(kinds[2 * ins[3]]))
                goto bad;
            continue;
        }
        if (op == OP_OUT) {
            if (ins[1] < 0 || ins[1] >= nout) goto bad;
        } else if (op == OP_SUM) {
            if (!MANY(kinds[2 * ins[2]])) goto bad;
        } else {
            if (ins[1] < 0 || ins[1] >= nregs || kinds[2 * ins[1]] < REG_BUFFER) goto bad;
            if (op != OP_NEG && (ins[3] < 0 || ins[3] >= nregs)) goto bad;
            /* a buffer of one value is made of numbers only; an array's, of an array */
            int many = MANY(kinds[2 * ins[2]]) || (op != OP_NEG && MANY(kinds[2 * ins[3]]));
            if (many != MANY(kinds[2 * ins[1]])) goto bad;
        }
    }
    temps = nbuffers <= STATIC_TEMPS ? temps_static
                                     : (double *)PyMem_Malloc(nbuffers * BLOCK * sizeof(double));
    if (temps == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    double *in[MAX_INPUTS], *out[MAX_INPUTS];
    for (Py_ssize_t k = 0; k < nin; k++) in[k] = (double *)views[k].buf;
    for (Py_ssize_t k = 0; k < nout; k++) out[k] = (double *)views[nin + k].buf;
    feclearexcept(FE_ALL_EXCEPT);
    double total = execute(kinds, nregs, instr, ninstr, n, in, out, numbers, temps);
    if (fetestexcept(FE_DIVBYZERO | FE_OVERFLOW | FE_INVALID) || !isfinite(total)) {
        result = Py_None;
        Py_INCREF(result);
    } else {
        result = PyFloat_FromDouble(total);
    }
    goto done;
bad:
    PyErr_SetString(PyExc_ValueError, "not a program of ddx/replay/chain.py");
done:
    for (Py_ssize_t k = 0; k < got; k++) PyBuffer_Release(&views[k]);
    if (temps != NULL && temps != temps_static) PyMem_Free(temps);
    PyBuffer_Release(&prog);
    PyBuffer_Release(&nums);
    return result;
}

static PyMethodDef methods[] = {
    {"run", (PyCFunction)(void (*)(void))run, METH_FASTCALL,
     "run(program, n, inputs, numbers, outs) -> float | None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "chainloop", NULL, -1, methods};

PyMODINIT_FUNC PyInit_chainloop(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "BLOCK", BLOCK) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
