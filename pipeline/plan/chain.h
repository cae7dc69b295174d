/* chain.h - (internal) the parsed op chain: user-level ops with their
 * parameters, before they are lowered to kernel ops for one image. */
#ifndef TS_CHAIN_H
#define TS_CHAIN_H

#include "tilestream.h"

enum { TS_MAX_PARAMS = 10, TS_MAX_LIST = 225 };

typedef enum ts_param_kind {
    TS_P_NUM,    /* a number */
    TS_P_ENUM,   /* one of a '|'-separated list of words */
    TS_P_LIST    /* numbers separated by spaces or ';' */
} ts_param_kind;

typedef struct ts_param_def {
    const char *key;
    ts_param_kind kind;
    const char *def;       /* default, as text */
    const char *choices;   /* TS_P_ENUM: "h|v" */
    double min, max;       /* TS_P_NUM: valid range */
    const char *help;
    int percent;           /* TS_P_NUM: may be given as a percentage ("50%") */
} ts_param_def;

struct ts_user_op;
struct ts_lowering;

/* One row of the op registry (ops.c). */
typedef struct ts_op_def {
    const char *name;
    const char *help;
    int npositional;       /* how many leading params may be given without key= */
    ts_param_def params[TS_MAX_PARAMS];
    /* Checks that need several parameters at once (NULL: none); text is the
     * whole chain, for the message. */
    ts_status (*validate)(const struct ts_user_op *op, const char *text, ts_err *err);
    /* Emit the op's kernel ops (ops.h's lowering API). */
    ts_status (*lower)(const struct ts_user_op *op, struct ts_lowering *lw, ts_err *err);
} ts_op_def;

typedef struct ts_param_value {
    double num;            /* TS_P_NUM; TS_P_ENUM: index into choices */
    int n;                 /* TS_P_LIST: count */
    double *list;          /* TS_P_LIST: malloc'd */
    int given;             /* 1 if set in the chain text */
    int percent;           /* given as a percentage: num holds the fraction (50% -> 0.5) */
} ts_param_value;

typedef struct ts_user_op {
    const ts_op_def *def;
    ts_param_value v[TS_MAX_PARAMS];
} ts_user_op;

struct ts_chain {
    int n;
    ts_user_op *ops;
    char *text;            /* canonical description */
};

/* The parser's look-ups by name (the rest of the library reads
 * parameters by index: ops.h). NULL or -1 when there is none. */
const ts_op_def *ts_op_find(const char *name);
/* The canonical text of c (malloc'd; NULL when out of memory): what
 * ts_chain_describe returns for a chain made here. */
char *ts_chain_text(const ts_chain *c);
/* to = from, its lists copied (to owns them); 0 when out of memory (then
 * to holds what was copied, for ts_chain_free). */
int ts_user_op_copy(ts_user_op *to, const ts_user_op *from);
int ts_op_param_index(const ts_op_def *def, const char *key);

#endif
