/*
 * Stave's script guest: QuickJS-ng behind a tiny, fixed export surface,
 * compiled to wasm32-wasi (reactor model) by guest/build.sh and run by
 * src/script/ in wasmtime with fuel.
 *
 * One instance runs one call. The host:
 *   1. calls _initialize, then stave_init(memory_limit, stack_limit);
 *   2. copies the source, the function name and the canonical-JSON input
 *      into buffers from stave_alloc (each NUL-terminated);
 *   3. calls stave_call, whose status is one of ST_* below, and reads the
 *      output (the result's JSON, or an error message) at stave_out_ptr /
 *      stave_out_len. A compile-only call that compiles outputs `null`.
 *
 * Scripts reach the host only through stave.call(name, arg), which goes
 * through the imported stave.host_call / stave.host_result. There is no
 * clock (Date and performance are never added), no randomness (Math.random
 * is deleted) and no I/O.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "quickjs.h"

#define EXPORT(name) __attribute__((export_name(name)))
#define IMPORT(name) __attribute__((import_module("stave"), import_name(name)))

/* Returns n >= 0: the result is n bytes; n < 0: the call failed and its
   message is -n - 1 bytes. Either way host_result copies them. */
IMPORT("host_call")
extern int32_t host_call(const char *name, int32_t name_len, const char *arg, int32_t arg_len);
IMPORT("host_result")
extern void host_result(char *dst);

enum {
    ST_OK = 0,
    ST_THROW = 1,
    ST_OUT_OF_MEMORY = 2,
    ST_STACK_OVERFLOW = 3,
    ST_SYNTAX = 4,
    ST_NO_FUNCTION = 5,
    ST_BAD_RESULT = 6,
    ST_BAD_INPUT = 7,
    ST_INIT = 8,
};

/* Bumped by QuickJS itself (guest/quickjs-stave.patch) whenever it raises
   an out-of-memory or a stack-overflow error. */
int stave_out_of_memory_events;
int stave_stack_overflow_events;

static JSRuntime *rt;
static JSContext *ctx;
static char *out;
static int32_t out_len;

static const char PRELUDE[] =
    "'use strict';\n"
    "(function () {\n"
    "  const g = globalThis;\n"
    "  for (const name of ['Date', 'WeakRef', 'FinalizationRegistry', 'Atomics',\n"
    "                      'SharedArrayBuffer', 'performance']) delete g[name];\n"
    "  delete Math.random;\n"
    "  const host = g.__stave_host;\n"
    "  delete g.__stave_host;\n"
    "  const call = function call(name, arg) {\n"
    "    return JSON.parse(host(String(name), JSON.stringify(arg === undefined ? null : arg)));\n"
    "  };\n"
    "  Object.defineProperty(g, 'stave', { value: Object.freeze({ call }) });\n"
    "})();\n";

EXPORT("stave_alloc")
void *stave_alloc(int32_t size) { return malloc(size > 0 ? (size_t)size : 1); }

EXPORT("stave_out_ptr")
char *stave_out_ptr(void) { return out; }

EXPORT("stave_out_len")
int32_t stave_out_len(void) { return out_len; }

/* Copies len bytes to a fresh output buffer; 0 when there is no memory
   for it (the output is then empty). */
static int set_out(const char *s, size_t len) {
    free(out);
    out_len = 0;
    out = malloc(len + 1);
    if (!out)
        return 0;
    memcpy(out, s, len);
    out[len] = 0;
    out_len = (int32_t)len;
    return 1;
}

static void set_out_str(const char *s) { (void)set_out(s, strlen(s)); }

static JSValue js_host(JSContext *c, JSValueConst this_val, int argc, JSValueConst *argv) {
    (void)this_val;
    (void)argc;
    size_t name_len, arg_len;
    const char *name = JS_ToCStringLen(c, &name_len, argv[0]);
    if (!name)
        return JS_EXCEPTION;
    const char *arg = JS_ToCStringLen(c, &arg_len, argv[1]);
    if (!arg) {
        JS_FreeCString(c, name);
        return JS_EXCEPTION;
    }
    int32_t n = host_call(name, (int32_t)name_len, arg, (int32_t)arg_len);
    JS_FreeCString(c, name);
    JS_FreeCString(c, arg);
    size_t len = n >= 0 ? (size_t)n : (size_t)(-(int64_t)n - 1);
    char *buf = js_malloc(c, len + 1);
    if (!buf)
        return JS_EXCEPTION;
    host_result(buf);
    buf[len] = 0;
    JSValue v = JS_NewStringLen(c, buf, len);
    js_free(c, buf);
    if (n >= 0 || JS_IsException(v))
        return v;
    JSValue err = JS_NewError(c);
    JS_DefinePropertyValueStr(c, err, "message", v, JS_PROP_WRITABLE | JS_PROP_CONFIGURABLE);
    return JS_Throw(c, err);
}

static int add_intrinsics(JSContext *c) {
    /* Date, WeakRef/FinalizationRegistry and performance are left out. */
    return JS_AddIntrinsicBaseObjects(c) || JS_AddIntrinsicEval(c) || JS_AddIntrinsicRegExp(c) ||
           JS_AddIntrinsicJSON(c) || JS_AddIntrinsicProxy(c) || JS_AddIntrinsicMapSet(c) ||
           JS_AddIntrinsicTypedArrays(c) || JS_AddIntrinsicPromise(c);
}

EXPORT("stave_init")
int32_t stave_init(int32_t memory_limit, int32_t stack_limit) {
    rt = JS_NewRuntime();
    if (!rt)
        return ST_INIT;
    JS_SetMemoryLimit(rt, (size_t)memory_limit);
    JS_SetMaxStackSize(rt, (size_t)stack_limit);
    ctx = JS_NewContextRaw(rt);
    if (!ctx || add_intrinsics(ctx))
        return ST_INIT;
    JSValue global = JS_GetGlobalObject(ctx);
    JSValue host = JS_NewCFunction(ctx, js_host, "__stave_host", 2);
    JS_SetPropertyStr(ctx, global, "__stave_host", host);
    JS_FreeValue(ctx, global);
    JSValue r = JS_Eval(ctx, PRELUDE, sizeof(PRELUDE) - 1, "<prelude>", JS_EVAL_TYPE_GLOBAL);
    if (JS_IsException(r))
        return ST_INIT;
    JS_FreeValue(ctx, r);
    return ST_OK;
}

static int str_is(JSValueConst v, const char *s) {
    size_t len;
    const char *p = JS_ToCStringLen(ctx, &len, v);
    if (!p)
        return 0;
    int same = len == strlen(s) && memcmp(p, s, len) == 0;
    JS_FreeCString(ctx, p);
    return same;
}

/* Takes the pending exception: its status, and its text as the output.
   An exception that looks like QuickJS's own out-of-memory or stack-overflow
   error counts as one only if QuickJS raised such an error during this call;
   a null exception (QuickJS could not allocate the error) after an
   out-of-memory is one too. */
static int32_t fail(int32_t status) {
    JSValue ex = JS_GetException(ctx);
    int32_t st = status;
    if (JS_IsNull(ex) && stave_out_of_memory_events > 0) {
        st = ST_OUT_OF_MEMORY;
    } else if (JS_IsError(ex)) {
        JSValue name = JS_GetPropertyStr(ctx, ex, "name");
        JSValue msg = JS_GetPropertyStr(ctx, ex, "message");
        if (stave_out_of_memory_events > 0 && str_is(name, "InternalError") && str_is(msg, "out of memory"))
            st = ST_OUT_OF_MEMORY;
        else if (stave_stack_overflow_events > 0 && str_is(name, "RangeError") &&
                 str_is(msg, "Maximum call stack size exceeded"))
            st = ST_STACK_OVERFLOW;
        JS_FreeValue(ctx, name);
        JS_FreeValue(ctx, msg);
    }
    size_t len;
    const char *text = JS_ToCStringLen(ctx, &len, ex);
    if (text) {
        set_out(text, len);
        JS_FreeCString(ctx, text);
    } else {
        JS_FreeValue(ctx, JS_GetException(ctx));
        set_out_str(st == ST_OUT_OF_MEMORY ? "InternalError: out of memory" : "<unprintable exception>");
    }
    JS_FreeValue(ctx, ex);
    return st;
}

static int32_t call_function(const char *fn, const char *input, int32_t input_len) {
    JSValue global = JS_GetGlobalObject(ctx);
    JSValue f = JS_GetPropertyStr(ctx, global, fn);
    if (JS_IsException(f)) {
        JS_FreeValue(ctx, global);
        return fail(ST_THROW);
    }
    if (!JS_IsFunction(ctx, f)) {
        JS_FreeValue(ctx, f);
        JS_FreeValue(ctx, global);
        set_out_str(fn);
        return ST_NO_FUNCTION;
    }
    JSValue arg = JS_ParseJSON(ctx, input, (size_t)input_len, "<input>");
    if (JS_IsException(arg)) {
        JS_FreeValue(ctx, f);
        JS_FreeValue(ctx, global);
        return fail(ST_BAD_INPUT);
    }
    JSValue r = JS_Call(ctx, f, JS_UNDEFINED, 1, &arg);
    JS_FreeValue(ctx, arg);
    JS_FreeValue(ctx, f);
    JS_FreeValue(ctx, global);
    if (JS_IsException(r))
        return fail(ST_THROW);
    if (!JS_IsObject(r) || JS_IsFunction(ctx, r) || JS_IsArray(r)) {
        JS_FreeValue(ctx, r);
        set_out_str("the result is not an object");
        return ST_BAD_RESULT;
    }
    JSValue json = JS_JSONStringify(ctx, r, JS_UNDEFINED, JS_UNDEFINED);
    JS_FreeValue(ctx, r);
    if (JS_IsException(json))
        return fail(ST_BAD_RESULT);
    if (!JS_IsString(json)) {
        JS_FreeValue(ctx, json);
        set_out_str("the result has no JSON form");
        return ST_BAD_RESULT;
    }
    size_t len;
    const char *text = JS_ToCStringLen(ctx, &len, json);
    JS_FreeValue(ctx, json);
    if (!text)
        return fail(ST_BAD_RESULT);
    int copied = set_out(text, len);
    JS_FreeCString(ctx, text);
    return copied ? ST_OK : ST_OUT_OF_MEMORY;
}

/* Compiles src; unless compile_only, runs it and calls the global function
   fn with the parsed input. */
EXPORT("stave_call")
int32_t stave_call(const char *src, int32_t src_len, const char *fn, const char *input,
                   int32_t input_len, int32_t compile_only) {
    JS_UpdateStackTop(rt);
    stave_out_of_memory_events = 0;
    stave_stack_overflow_events = 0;
    JSValue compiled = JS_Eval(ctx, src, (size_t)src_len, "<script>",
                               JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_STRICT | JS_EVAL_FLAG_COMPILE_ONLY);
    if (JS_IsException(compiled))
        return fail(ST_SYNTAX);
    if (compile_only) {
        JS_FreeValue(ctx, compiled);
        set_out_str("null");
        return ST_OK;
    }
    JSValue r = JS_EvalFunction(ctx, compiled);
    if (JS_IsException(r))
        return fail(ST_THROW);
    JS_FreeValue(ctx, r);
    return call_function(fn, input, input_len);
}
