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
} ts_param_def;

typedef struct ts_op_def {
    const char *name;
    const char *help;
    int npositional;       /* how many leading params may be given without key= */
    ts_param_def params[TS_MAX_PARAMS];
} ts_op_def;

typedef struct ts_param_value {
    double num;            /* TS_P_NUM; TS_P_ENUM: index into choices */
    int n;                 /* TS_P_LIST: count */
    double *list;          /* TS_P_LIST: malloc'd */
    int given;             /* 1 if set in the chain text */
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

const ts_op_def *ts_op_find(const char *name);
/* Index of param key in def, or -1. */
int ts_op_param_index(const ts_op_def *def, const char *key);
/* The numeric value (or enum index) of param key of op. */
double ts_op_num(const ts_user_op *op, const char *key);
/* The enum value of param key as text ("h"). */
const char *ts_op_enum(const ts_user_op *op, const char *key, char *buf, size_t n);

#endif
