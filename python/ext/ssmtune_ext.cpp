// _ssmtune_ext: the Python binding of ssmtune's C ABI, written against the
// CPython Limited API (abi3, 3.10+) so one build serves every CPython >= 3.10
// and no torch headers or C++ ABI are involved: every function takes and
// returns plain ints (handles, device pointers, a CUstream) and strings.
// The hot calls, fwd_launch and bwd_launch, are METH_FASTCALL with
// positional ints only.
#define PY_SSIZE_T_CLEAN
#define Py_LIMITED_API 0x030A0000
#include <Python.h>

#include <cstdint>
#include <string>

#include "ssmtune/ssmtune.h"

namespace {

PyObject* g_error = nullptr;  // ssmtune._ssmtune_ext.Error (a RuntimeError)

// Raises the C ABI's last error: ValueError for invalid arguments, Error otherwise.
PyObject* raise_status(ssmtune_status s) {
  const std::string msg = std::string("ssmtune: ") + ssmtune_last_error();
  PyErr_SetString(s == SSMTUNE_ERROR_INVALID_ARGUMENT ? PyExc_ValueError : g_error, msg.c_str());
  return nullptr;
}

// An int handle or pointer (None is 0); false with an exception set otherwise.
bool as_pointer(PyObject* o, void** out) {
  if (o == Py_None) {
    *out = nullptr;
    return true;
  }
  const unsigned long long v = PyLong_AsUnsignedLongLong(o);
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) return false;
  *out = reinterpret_cast<void*>(static_cast<uintptr_t>(v));
  return true;
}

// A plan handle: a pointer that must not be 0; false with an exception set.
bool as_plan(PyObject* o, void** out) {
  if (!as_pointer(o, out)) return false;
  if (*out != nullptr) return true;
  PyErr_SetString(PyExc_ValueError, "ssmtune: plan must not be 0");
  return false;
}

PyObject* from_pointer(const void* p) {
  return PyLong_FromUnsignedLongLong(
      static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)));
}

PyObject* version(PyObject*, PyObject*) { return PyUnicode_FromString(ssmtune_version()); }

PyObject* abi_version(PyObject*, PyObject*) { return PyLong_FromLong(ssmtune_abi_version()); }

PyObject* last_error(PyObject*, PyObject*) { return PyUnicode_FromString(ssmtune_last_error()); }

// runtime_create(db_path: str | None, device: int) -> int
PyObject* runtime_create(PyObject*, PyObject* const* args, Py_ssize_t n) {
  if (n != 2) {
    PyErr_SetString(PyExc_TypeError, "runtime_create(db_path, device) takes 2 arguments");
    return nullptr;
  }
  const char* db = nullptr;
  if (args[0] != Py_None) {
    db = PyUnicode_AsUTF8AndSize(args[0], nullptr);
    if (db == nullptr) return nullptr;
  }
  const long device = PyLong_AsLong(args[1]);
  if (device == -1 && PyErr_Occurred()) return nullptr;
  ssmtune_runtime* rt = nullptr;
  ssmtune_status s;
  PyThreadState* ts = PyEval_SaveThread();  // creating a context takes a while
  s = ssmtune_runtime_create(db, static_cast<int>(device), &rt);
  PyEval_RestoreThread(ts);
  if (s != SSMTUNE_OK) return raise_status(s);
  return from_pointer(rt);
}

// runtime_destroy(handle: int) -> None
PyObject* runtime_destroy(PyObject*, PyObject* arg) {
  void* rt;
  if (!as_pointer(arg, &rt)) return nullptr;
  ssmtune_runtime_destroy(static_cast<ssmtune_runtime*>(rt));
  Py_RETURN_NONE;
}

// Reads a layout tuple (per tensor: rank, dtype, shape[4], stride[4]; rank
// 0: absent; then delta_softplus) into `slots`; false with an exception set.
bool read_layout(const char* fn, PyObject* layout, ssmtune_tensor* const* slots, int n_tensors,
                 int32_t* delta_softplus) {
  const Py_ssize_t n_ints = static_cast<Py_ssize_t>(n_tensors) * 10 + 1;
  if (!PyTuple_Check(layout) || PyTuple_Size(layout) != n_ints) {
    PyErr_Format(PyExc_TypeError, "%s: layout must be a tuple of %zd ints", fn, n_ints);
    return false;
  }
  for (int t = 0; t < n_tensors; ++t) {
    long long f[10];
    for (int i = 0; i < 10; ++i) {
      f[i] = PyLong_AsLongLong(PyTuple_GetItem(layout, 10 * t + i));
      if (f[i] == -1 && PyErr_Occurred()) return false;
    }
    slots[t]->rank = static_cast<int32_t>(f[0]);
    slots[t]->dtype = static_cast<int32_t>(f[1]);
    for (int d = 0; d < 4; ++d) {
      slots[t]->shape[d] = f[2 + d];
      slots[t]->stride[d] = f[6 + d];
    }
  }
  const long long sp = PyLong_AsLongLong(PyTuple_GetItem(layout, n_ints - 1));
  if (sp == -1 && PyErr_Occurred()) return false;
  *delta_softplus = sp != 0;
  return true;
}

// fwd_prepare(runtime: int, layout: tuple[int, ...]) -> int (the plan)
// layout: per tensor (in ssmtune_fwd_args order) rank, dtype, shape[4],
// stride[4] (rank 0: absent), then delta_softplus: 121 ints.
PyObject* fwd_prepare(PyObject*, PyObject* const* args, Py_ssize_t n) {
  if (n != 2) {
    PyErr_SetString(PyExc_TypeError, "fwd_prepare(runtime, layout) takes 2 arguments");
    return nullptr;
  }
  void* rt;
  if (!as_pointer(args[0], &rt)) return nullptr;
  ssmtune_fwd_args a{};
  ssmtune_tensor* slots[SSMTUNE_FWD_NUM_TENSORS] = {&a.u,  &a.delta, &a.A,     &a.B,
                                                    &a.C,  &a.D,     &a.z,     &a.delta_bias,
                                                    &a.h0, &a.out,   &a.out_z, &a.last_state};
  if (!read_layout("fwd_prepare", args[1], slots, SSMTUNE_FWD_NUM_TENSORS, &a.delta_softplus))
    return nullptr;
  ssmtune_fwd_plan* plan = nullptr;
  ssmtune_status s;
  // Compiling may take seconds: other Python threads run meanwhile.
  PyThreadState* ts = PyEval_SaveThread();
  s = ssmtune_fwd_prepare(static_cast<ssmtune_runtime*>(rt), &a, &plan);
  PyEval_RestoreThread(ts);
  if (s != SSMTUNE_OK) return raise_status(s);
  return from_pointer(plan);
}

PyObject* fwd_scratch_bytes(PyObject*, PyObject* arg) {
  void* plan;
  if (!as_plan(arg, &plan)) return nullptr;
  return PyLong_FromSize_t(ssmtune_fwd_plan_scratch_bytes(static_cast<ssmtune_fwd_plan*>(plan)));
}

PyObject* fwd_explain(PyObject*, PyObject* arg) {
  void* plan;
  if (!as_pointer(arg, &plan)) return nullptr;
  char buf[4096];
  const ssmtune_status s =
      ssmtune_fwd_plan_explain(static_cast<ssmtune_fwd_plan*>(plan), buf, sizeof buf);
  if (s != SSMTUNE_OK) return raise_status(s);
  return PyUnicode_FromString(buf);
}

// The optional (states, interval) pair that ends a launch's arguments:
// `extra` of them (0 or 2); false with an exception set.
bool read_states(const char* fn, PyObject* const* args, Py_ssize_t extra, void** states,
                 int* interval) {
  *states = nullptr;
  *interval = 0;
  if (extra == 0) return true;
  if (!as_pointer(args[0], states)) return false;
  const long v = PyLong_AsLong(args[1]);
  if (v == -1 && PyErr_Occurred()) return false;
  if (*states == nullptr || v <= 0 || v > 1 << 20) {
    PyErr_Format(PyExc_ValueError, "%s: states must be a pointer and interval > 0, got %ld", fn, v);
    return false;
  }
  *interval = static_cast<int>(v);
  return true;
}

// fwd_launch(plan, u, delta, A, B, C, D, z, delta_bias, h0, out, out_z,
//            last_state, scratch, stream[, states, interval]) -> None;
// pointers are ints (0 or None: absent); with states, the training launch
// that saves the backward's states. Enqueues only, so the GIL is kept (a
// release costs more).
PyObject* fwd_launch(PyObject*, PyObject* const* args, Py_ssize_t n) {
  constexpr Py_ssize_t kArgs = SSMTUNE_FWD_NUM_TENSORS + 3;
  if (n != kArgs && n != kArgs + 2) {
    PyErr_Format(PyExc_TypeError,
                 "fwd_launch(plan, 12 pointers, scratch, stream[, states, interval]) takes %zd "
                 "or %zd arguments, got %zd",
                 kArgs, kArgs + 2, n);
    return nullptr;
  }
  void* p[kArgs];
  for (Py_ssize_t i = 0; i < kArgs; ++i)
    if (!as_pointer(args[i], &p[i])) return nullptr;
  void* states;
  int interval;
  if (!read_states("fwd_launch", args + kArgs, n - kArgs, &states, &interval)) return nullptr;
  auto* plan = static_cast<ssmtune_fwd_plan*>(p[0]);
  const ssmtune_status s =
      states == nullptr
          ? ssmtune_fwd_launch(plan, p + 1, p[kArgs - 2], p[kArgs - 1])
          : ssmtune_fwd_launch_saving(plan, p + 1, p[kArgs - 2], states, interval, p[kArgs - 1]);
  if (s != SSMTUNE_OK) return raise_status(s);
  Py_RETURN_NONE;
}

// fwd_prepare_states(plan, interval) -> int: the bytes of the states a
// launch saves (0: none), its saving variant compiled.
PyObject* fwd_prepare_states(PyObject*, PyObject* const* args, Py_ssize_t n) {
  if (n != 2) {
    PyErr_SetString(PyExc_TypeError, "fwd_prepare_states(plan, interval) takes 2 arguments");
    return nullptr;
  }
  void* plan;
  if (!as_plan(args[0], &plan)) return nullptr;
  const long interval = PyLong_AsLong(args[1]);
  if (interval == -1 && PyErr_Occurred()) return nullptr;
  size_t bytes = 0;
  ssmtune_status s;
  PyThreadState* ts = PyEval_SaveThread();  // compiling may take seconds
  s = ssmtune_fwd_plan_prepare_states(static_cast<ssmtune_fwd_plan*>(plan),
                                      static_cast<int>(interval), &bytes);
  PyEval_RestoreThread(ts);
  if (s != SSMTUNE_OK) return raise_status(s);
  return PyLong_FromSize_t(bytes);
}

// bwd_prepare(runtime: int, layout: tuple[int, ...]) -> int (the plan)
// layout: the forward's form over the 21 tensors of ssmtune_bwd_args: 211 ints.
PyObject* bwd_prepare(PyObject*, PyObject* const* args, Py_ssize_t n) {
  if (n != 2) {
    PyErr_SetString(PyExc_TypeError, "bwd_prepare(runtime, layout) takes 2 arguments");
    return nullptr;
  }
  void* rt;
  if (!as_pointer(args[0], &rt)) return nullptr;
  ssmtune_bwd_args a{};
  ssmtune_tensor* slots[SSMTUNE_BWD_NUM_TENSORS] = {
      &a.u,          &a.delta, &a.A,   &a.B,    &a.C,     &a.D,           &a.z,
      &a.delta_bias, &a.h0,    &a.out, &a.dout, &a.dlast, &a.du,          &a.ddelta,
      &a.dA,         &a.dB,    &a.dC,  &a.dD,   &a.dz,    &a.ddelta_bias, &a.dh0};
  if (!read_layout("bwd_prepare", args[1], slots, SSMTUNE_BWD_NUM_TENSORS, &a.delta_softplus))
    return nullptr;
  ssmtune_bwd_plan* plan = nullptr;
  ssmtune_status s;
  PyThreadState* ts = PyEval_SaveThread();  // compiling may take seconds
  s = ssmtune_bwd_prepare(static_cast<ssmtune_runtime*>(rt), &a, &plan);
  PyEval_RestoreThread(ts);
  if (s != SSMTUNE_OK) return raise_status(s);
  return from_pointer(plan);
}

PyObject* bwd_scratch_bytes(PyObject*, PyObject* arg) {
  void* plan;
  if (!as_plan(arg, &plan)) return nullptr;
  return PyLong_FromSize_t(ssmtune_bwd_plan_scratch_bytes(static_cast<ssmtune_bwd_plan*>(plan)));
}

PyObject* bwd_explain(PyObject*, PyObject* arg) {
  void* plan;
  if (!as_plan(arg, &plan)) return nullptr;
  char buf[4096];
  const ssmtune_status s =
      ssmtune_bwd_plan_explain(static_cast<ssmtune_bwd_plan*>(plan), buf, sizeof buf);
  if (s != SSMTUNE_OK) return raise_status(s);
  return PyUnicode_FromString(buf);
}

// bwd_launch(plan, u, delta, A, B, C, D, z, delta_bias, h0, out, dout, dlast,
//            du, ddelta, dA, dB, dC, dD, dz, ddelta_bias, dh0, scratch,
//            stream[, states, interval]) -> None; pointers are ints (0 or
// None: absent); with states, they are read instead of recomputed.
// Enqueues only; the GIL is kept.
PyObject* bwd_launch(PyObject*, PyObject* const* args, Py_ssize_t n) {
  constexpr Py_ssize_t kArgs = SSMTUNE_BWD_NUM_TENSORS + 3;
  if (n != kArgs && n != kArgs + 2) {
    PyErr_Format(PyExc_TypeError,
                 "bwd_launch(plan, 21 pointers, scratch, stream[, states, interval]) takes %zd "
                 "or %zd arguments, got %zd",
                 kArgs, kArgs + 2, n);
    return nullptr;
  }
  void* p[kArgs];
  for (Py_ssize_t i = 1; i < kArgs; ++i)
    if (!as_pointer(args[i], &p[i])) return nullptr;
  if (!as_plan(args[0], &p[0])) return nullptr;
  void* states;
  int interval;
  if (!read_states("bwd_launch", args + kArgs, n - kArgs, &states, &interval)) return nullptr;
  auto* plan = static_cast<ssmtune_bwd_plan*>(p[0]);
  const ssmtune_status s =
      states == nullptr
          ? ssmtune_bwd_launch(plan, p + 1, p[kArgs - 2], p[kArgs - 1])
          : ssmtune_bwd_launch_saved(plan, p + 1, p[kArgs - 2], states, interval, p[kArgs - 1]);
  if (s != SSMTUNE_OK) return raise_status(s);
  Py_RETURN_NONE;
}

// bwd_states_scratch_bytes(plan) -> int: the scratch of a launch given states.
PyObject* bwd_states_scratch_bytes(PyObject*, PyObject* arg) {
  void* plan;
  if (!as_plan(arg, &plan)) return nullptr;
  return PyLong_FromSize_t(
      ssmtune_bwd_plan_states_scratch_bytes(static_cast<ssmtune_bwd_plan*>(plan)));
}

// bwd_states_interval(plan) -> int: 0 when the plan takes no saved states.
PyObject* bwd_states_interval(PyObject*, PyObject* arg) {
  void* plan;
  if (!as_plan(arg, &plan)) return nullptr;
  return PyLong_FromLong(ssmtune_bwd_plan_states_interval(static_cast<ssmtune_bwd_plan*>(plan)));
}

// step_prepare(runtime: int, layout: tuple[int, ...]) -> int (the plan)
// layout: the forward's form over the 11 tensors of ssmtune_step_args
// (state_indices with dtype 3 or 4: int32, int64), then dt_softplus: 111 ints.
PyObject* step_prepare(PyObject*, PyObject* const* args, Py_ssize_t n) {
  if (n != 2) {
    PyErr_SetString(PyExc_TypeError, "step_prepare(runtime, layout) takes 2 arguments");
    return nullptr;
  }
  void* rt;
  if (!as_pointer(args[0], &rt)) return nullptr;
  ssmtune_step_args a{};
  ssmtune_tensor* slots[SSMTUNE_STEP_NUM_TENSORS] = {
      &a.state, &a.x, &a.dt, &a.A, &a.B, &a.C, &a.D, &a.z, &a.dt_bias, &a.out, &a.state_indices};
  if (!read_layout("step_prepare", args[1], slots, SSMTUNE_STEP_NUM_TENSORS, &a.dt_softplus))
    return nullptr;
  ssmtune_step_plan* plan = nullptr;
  ssmtune_status s;
  PyThreadState* ts = PyEval_SaveThread();  // compiling may take seconds
  s = ssmtune_step_prepare(static_cast<ssmtune_runtime*>(rt), &a, &plan);
  PyEval_RestoreThread(ts);
  if (s != SSMTUNE_OK) return raise_status(s);
  return from_pointer(plan);
}

PyObject* step_explain(PyObject*, PyObject* arg) {
  void* plan;
  if (!as_plan(arg, &plan)) return nullptr;
  char buf[4096];
  const ssmtune_status s =
      ssmtune_step_plan_explain(static_cast<ssmtune_step_plan*>(plan), buf, sizeof buf);
  if (s != SSMTUNE_OK) return raise_status(s);
  return PyUnicode_FromString(buf);
}

// step_launch(plan, state, x, dt, A, B, C, D, z, dt_bias, out, state_indices,
//             stream) -> None; pointers are ints (0 or None: absent).
// Enqueues one kernel; the GIL is kept.
PyObject* step_launch(PyObject*, PyObject* const* args, Py_ssize_t n) {
  constexpr Py_ssize_t kArgs = SSMTUNE_STEP_NUM_TENSORS + 2;
  if (n != kArgs) {
    PyErr_Format(PyExc_TypeError,
                 "step_launch(plan, 11 pointers, stream) takes %zd arguments, "
                 "got %zd",
                 kArgs, n);
    return nullptr;
  }
  void* p[kArgs];
  for (Py_ssize_t i = 1; i < kArgs; ++i)
    if (!as_pointer(args[i], &p[i])) return nullptr;
  if (!as_plan(args[0], &p[0])) return nullptr;
  const ssmtune_status s =
      ssmtune_step_launch(static_cast<ssmtune_step_plan*>(p[0]), p + 1, p[kArgs - 1]);
  if (s != SSMTUNE_OK) return raise_status(s);
  Py_RETURN_NONE;
}

template <typename F>
PyCFunction fastcall(F f) {  // through void(*)(): the cast PyMethodDef wants, without a warning
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f));
}

PyMethodDef methods[] = {
    {"step_prepare", fastcall(step_prepare), METH_FASTCALL,
     "step_prepare(runtime, layout) -> plan (cached per layout by the runtime)"},
    {"step_explain", step_explain, METH_O, "step_explain(plan) -> str"},
    {"step_launch", fastcall(step_launch), METH_FASTCALL,
     "step_launch(plan, state, x, dt, A, B, C, D, z, dt_bias, out, state_indices, stream)"},
    {"version", version, METH_NOARGS, "The library's version."},
    {"abi_version", abi_version, METH_NOARGS, "The C ABI's revision."},
    {"last_error", last_error, METH_NOARGS, "This thread's last error message."},
    {"runtime_create", fastcall(runtime_create), METH_FASTCALL,
     "runtime_create(db_path, device) -> handle"},
    {"runtime_destroy", runtime_destroy, METH_O, "runtime_destroy(handle)"},
    {"fwd_prepare", fastcall(fwd_prepare), METH_FASTCALL,
     "fwd_prepare(runtime, layout) -> plan (cached per layout by the runtime)"},
    {"fwd_scratch_bytes", fwd_scratch_bytes, METH_O, "fwd_scratch_bytes(plan) -> int"},
    {"fwd_explain", fwd_explain, METH_O, "fwd_explain(plan) -> str"},
    {"fwd_launch", fastcall(fwd_launch), METH_FASTCALL,
     "fwd_launch(plan, u, delta, A, B, C, D, z, delta_bias, h0, out, out_z, last_state, "
     "scratch, stream[, states, interval])"},
    {"fwd_prepare_states", fastcall(fwd_prepare_states), METH_FASTCALL,
     "fwd_prepare_states(plan, interval) -> int bytes (0: the plan saves none; compiles the "
     "saving variant)"},
    {"bwd_prepare", fastcall(bwd_prepare), METH_FASTCALL,
     "bwd_prepare(runtime, layout) -> plan (cached per layout by the runtime)"},
    {"bwd_scratch_bytes", bwd_scratch_bytes, METH_O, "bwd_scratch_bytes(plan) -> int"},
    {"bwd_explain", bwd_explain, METH_O, "bwd_explain(plan) -> str"},
    {"bwd_launch", fastcall(bwd_launch), METH_FASTCALL,
     "bwd_launch(plan, u, delta, A, B, C, D, z, delta_bias, h0, out, dout, dlast, du, ddelta, "
     "dA, dB, dC, dD, dz, ddelta_bias, dh0, scratch, stream[, states, interval])"},
    {"bwd_states_interval", bwd_states_interval, METH_O,
     "bwd_states_interval(plan) -> int (0: the plan takes no saved states)"},
    {"bwd_states_scratch_bytes", bwd_states_scratch_bytes, METH_O,
     "bwd_states_scratch_bytes(plan) -> int (the scratch of a launch given saved states)"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT,
                          "_ssmtune_ext",
                          "ssmtune's C ABI for Python (abi3; ints in, ints out).",
                          -1,
                          methods,
                          nullptr,
                          nullptr,
                          nullptr,
                          nullptr};

}  // namespace

// Python finds the module by this name (PyMODINIT_FUNC declares it extern "C").
// NOLINTNEXTLINE(bugprone-reserved-identifier, readability-identifier-naming)
PyMODINIT_FUNC PyInit__ssmtune_ext(void) {
  PyObject* m = PyModule_Create(&module_def);
  if (m == nullptr) return nullptr;
  if (PyModule_AddIntConstant(m, "NUM_TENSORS", SSMTUNE_FWD_NUM_TENSORS) != 0 ||
      PyModule_AddIntConstant(m, "BWD_NUM_TENSORS", SSMTUNE_BWD_NUM_TENSORS) != 0 ||
      PyModule_AddStringConstant(m, "__version__", ssmtune_version()) != 0) {
    Py_DECREF(m);
    return nullptr;
  }
  if (g_error == nullptr) {  // kept for the life of the process
    g_error = PyErr_NewException("ssmtune._ssmtune_ext.Error", PyExc_RuntimeError, nullptr);
    if (g_error == nullptr) {
      Py_DECREF(m);
      return nullptr;
    }
  }
  Py_INCREF(g_error);  // the module's reference (AddObject steals it on success)
  if (PyModule_AddObject(m, "Error", g_error) != 0) {
    Py_DECREF(g_error);
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
