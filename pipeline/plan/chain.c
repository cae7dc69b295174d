/* chain.c - the op-chain parser (the op registry it reads is ops.c).
 *
 * Grammar (ffmpeg-filter style):
 *   chain  := op (',' op)*
 *   op     := name | name '=' params
 *   params := param (':' param)*
 *   param  := key '=' value | value      (bare values fill the op's leading
 *                                         positional parameters in order)
 * Lists (conv taps) are numbers separated by spaces or ';'.
 * Example: matrix=sepia,gauss=sigma=1.5,sharpen=amount=0.6,transpose,resize=w=1920:h=-1 */
#include "ops.h"
#include "plan.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int nparams(const ts_op_def *def)
{
    int n = 0;
    while (n < TS_MAX_PARAMS && def->params[n].key) n++;
    return n;
}

const ts_op_def *ts_op_find(const char *name)
{
    for (int i = 0; i < TS_OP_COUNT; i++)
        if (strcmp(ts_ops[i].name, name) == 0) return &ts_ops[i];
    return NULL;
}

int ts_op_param_index(const ts_op_def *def, const char *key)
{
    for (int i = 0; i < nparams(def); i++)
        if (strcmp(def->params[i].key, key) == 0) return i;
    return -1;
}

/* The idx-th word of a '|'-separated list, into buf. */
static const char *choice_at(const char *choices, int idx, char *buf, size_t n)
{
    const char *p = choices;
    for (int i = 0; i < idx && p; i++) {
        p = strchr(p, '|');
        if (p) p++;
    }
    if (!p) { snprintf(buf, n, "?"); return buf; }
    size_t len = strcspn(p, "|");
    snprintf(buf, n, "%.*s", (int)len, p);
    return buf;
}

/* ------------------------------------------------------------ suggestions */

static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 31 || lb > 31) return 99;
    int d[32][32];
    for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            int best = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

/* Nearest of the candidates if close (public: the CLI answers a misspelt
 * option or command with the same thresholds). */
const char *ts_nearest_word(const char *word, const char *const *cands, int ncands)
{
    const char *best = NULL;
    int best_d = 99;
    for (int i = 0; i < ncands; i++) {
        int d = edit_distance(word, cands[i]);
        if (d < best_d) { best_d = d; best = cands[i]; }
    }
    int limit = strlen(word) <= 3 ? 1 : strlen(word) <= 6 ? 2 : 3;
    return best_d <= limit ? best : NULL;
}

/* ---------------------------------------------------------------- parser */

typedef struct parser {
    const char *text;   /* the whole chain, for the caret display */
    ts_err *err;
} parser;

/* An error that shows the chain with a caret line under [at, at+len). */
static ts_status parse_error(parser *p, const char *at, size_t len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static ts_status parse_error(parser *p, const char *at, size_t len, const char *fmt, ...)
{
    char what[400], caret[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t off = (size_t)(at - p->text), i = 0;
    if (len == 0) len = 1;
    for (; i < off && i < sizeof caret - 2; i++) caret[i] = ' ';
    for (size_t k = 0; k < len && i < sizeof caret - 1; k++) caret[i++] = '^';
    caret[i] = '\0';
    return ts_err_set(p->err, TS_E_ARG, "bad op chain: %s\n  %.280s\n  %s", what, p->text, caret);
}

static int parse_number(const char *s, size_t len, double *out)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf) return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    double v = strtod(buf, &end);
    if (*end != '\0' || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

static ts_status set_value(parser *p, const ts_op_def *def, int pi, ts_param_value *v,
                           const char *s, size_t len)
{
    const ts_param_def *pd = &def->params[pi];
    v->given = 1;
    v->percent = pd->kind == TS_P_NUM && len > 1 && s[len - 1] == '%';
    if (v->percent) {
        if (!pd->percent)
            return parse_error(p, s, len, "%s: %s takes no percentage", def->name, pd->key);
        if (!parse_number(s, len - 1, &v->num) || !(v->num > 0) || v->num > 1e6)
            return parse_error(p, s, len, "%s: %s wants a percentage above 0, not '%.*s'", def->name, pd->key,
                               (int)len, s);
        v->num /= 100;   /* the fraction; the op says of what */
        return TS_OK;
    }
    if (pd->kind == TS_P_NUM) {
        if (!parse_number(s, len, &v->num))
            return parse_error(p, s, len, "%s: %s wants a number, not '%.*s'", def->name, pd->key, (int)len, s);
        if (v->num < pd->min || v->num > pd->max)
            return parse_error(p, s, len, "%s: %s must be between %g and %g", def->name, pd->key, pd->min, pd->max);
        return TS_OK;
    }
    if (pd->kind == TS_P_ENUM) {
        const char *c = pd->choices;
        for (int idx = 0; c; idx++) {
            size_t cl = strcspn(c, "|");
            if (cl == len && strncmp(c, s, len) == 0) { v->num = idx; return TS_OK; }
            c = c[cl] ? c + cl + 1 : NULL;
        }
        char word[64], words[8][32];
        const char *cands[8];
        int nc = 0;
        snprintf(word, sizeof word, "%.*s", (int)len, s);
        for (c = pd->choices; c && nc < 8; nc++) {
            size_t cl = strcspn(c, "|");
            snprintf(words[nc], sizeof words[nc], "%.*s", (int)cl, c);
            cands[nc] = words[nc];
            c = c[cl] ? c + cl + 1 : NULL;
        }
        const char *near = ts_nearest_word(word, cands, nc);
        if (near)
            return parse_error(p, s, len, "%s: unknown %s '%s' (did you mean '%s'?)", def->name, pd->key, word, near);
        return parse_error(p, s, len, "%s: unknown %s '%s' (one of %s)", def->name, pd->key, word, pd->choices);
    }
    /* list */
    free(v->list);
    v->list = malloc(sizeof(double) * TS_MAX_LIST);
    v->n = 0;
    if (!v->list) return ts_err_set(p->err, TS_E_NOMEM, "out of memory parsing the op chain");
    size_t i = 0;
    while (i < len) {
        while (i < len && (s[i] == ' ' || s[i] == ';')) i++;
        size_t j = i;
        while (j < len && s[j] != ' ' && s[j] != ';') j++;
        if (j == i) break;
        if (v->n == TS_MAX_LIST)
            return parse_error(p, s, len, "%s: %s has more than %d numbers", def->name, pd->key, TS_MAX_LIST);
        if (!parse_number(s + i, j - i, &v->list[v->n]))
            return parse_error(p, s + i, j - i, "%s: '%.*s' in %s is not a number", def->name, (int)(j - i), s + i, pd->key);
        v->n++;
        i = j;
    }
    return TS_OK;
}

static ts_status unknown_op(parser *p, const char *name, size_t len)
{
    char word[64];
    const char *cands[TS_OP_COUNT];
    snprintf(word, sizeof word, "%.*s", (int)len, name);
    for (int i = 0; i < TS_OP_COUNT; i++) cands[i] = ts_ops[i].name;
    const char *near = ts_nearest_word(word, cands, TS_OP_COUNT);
    if (len == 0) return parse_error(p, name, 1, "empty op (two commas, or a comma at an end?)");
    if (near) return parse_error(p, name, len, "unknown op '%s' (did you mean '%s'?)", word, near);
    return parse_error(p, name, len, "unknown op '%s' (see 'tilestream ops')", word);
}

static ts_status unknown_key(parser *p, const ts_op_def *def, const char *key, size_t len)
{
    char word[64];
    const char *cands[TS_MAX_PARAMS];
    int n = nparams(def);
    snprintf(word, sizeof word, "%.*s", (int)len, key);
    for (int i = 0; i < n; i++) cands[i] = def->params[i].key;
    const char *near = n ? ts_nearest_word(word, cands, n) : NULL;
    if (n == 0) return parse_error(p, key, len, "%s takes no parameters", def->name);
    if (near) return parse_error(p, key, len, "%s has no parameter '%s' (did you mean '%s'?)", def->name, word, near);
    return parse_error(p, key, len, "%s has no parameter '%s'", def->name, word);
}

static void set_defaults(ts_user_op *op)
{
    for (int i = 0; i < nparams(op->def); i++) {
        const ts_param_def *pd = &op->def->params[i];
        op->v[i].given = 0;
        if (pd->kind == TS_P_NUM) op->v[i].num = strtod(pd->def, NULL);
        if (pd->kind == TS_P_ENUM) {
            size_t dl = strlen(pd->def);
            const char *c = pd->choices;
            for (int idx = 0; c; idx++) {
                size_t cl = strcspn(c, "|");
                if (cl == dl && strncmp(c, pd->def, dl) == 0) op->v[i].num = idx;
                c = c[cl] ? c + cl + 1 : NULL;
            }
        }
    }
}

/* Parse one op from [s, s+len). */
static ts_status parse_op(parser *p, const char *s, size_t len, ts_user_op *op)
{
    size_t name_len = 0;
    while (name_len < len && s[name_len] != '=') name_len++;
    char name[32];
    snprintf(name, sizeof name, "%.*s", (int)(name_len < 31 ? name_len : 31), s);
    op->def = name_len < 31 ? ts_op_find(name) : NULL;
    if (!op->def) return unknown_op(p, s, name_len);
    set_defaults(op);
    if (name_len == len) return TS_OK;

    const char *q = s + name_len + 1, *end = s + len;
    int positional = 0;
    if (q == end) return parse_error(p, s, len, "%s: '=' with no value", op->def->name);
    while (q < end) {
        const char *part_end = q;
        while (part_end < end && *part_end != ':') part_end++;
        const char *eq = memchr(q, '=', (size_t)(part_end - q));
        int pi;
        const char *val;
        if (eq) {
            char key[32];
            size_t kl = (size_t)(eq - q);
            snprintf(key, sizeof key, "%.*s", (int)(kl < 31 ? kl : 31), q);
            pi = kl < 31 ? ts_op_param_index(op->def, key) : -1;
            if (pi < 0) return unknown_key(p, op->def, q, kl);
            val = eq + 1;
        } else {
            if (positional >= op->def->npositional) {
                if (op->def->npositional == 0)
                    return parse_error(p, q, (size_t)(part_end - q), "%s wants key=value parameters", op->def->name);
                return parse_error(p, q, (size_t)(part_end - q), "%s: too many values without a key", op->def->name);
            }
            pi = positional++;
            val = q;
        }
        ts_status st = set_value(p, op->def, pi, &op->v[pi], val, (size_t)(part_end - val));
        if (st != TS_OK) return st;
        q = part_end < end ? part_end + 1 : end;
    }
    return TS_OK;
}

static void append(char **buf, size_t *len, size_t *cap, const char *s)
{
    size_t n = strlen(s);
    if (*len + n + 1 > *cap) {
        size_t nc = (*cap + n + 1) * 2;
        char *b = realloc(*buf, nc);
        if (!b) return;
        *buf = b;
        *cap = nc;
    }
    memcpy(*buf + *len, s, n + 1);
    *len += n;
}

/* Canonical text: every op with every parameter. */
static char *describe(const ts_chain *c)
{
    char *buf = NULL, tmp[64];
    size_t len = 0, cap = 0;
    append(&buf, &len, &cap, "");
    for (int i = 0; i < c->n; i++) {
        const ts_user_op *op = &c->ops[i];
        if (i) append(&buf, &len, &cap, ",");
        append(&buf, &len, &cap, op->def->name);
        for (int k = 0; k < nparams(op->def); k++) {
            const ts_param_def *pd = &op->def->params[k];
            if (pd->kind == TS_P_LIST && !op->v[k].given) continue;
            append(&buf, &len, &cap, k ? ":" : "=");
            append(&buf, &len, &cap, pd->key);
            append(&buf, &len, &cap, "=");
            if (pd->kind == TS_P_NUM && op->v[k].percent) snprintf(tmp, sizeof tmp, "%g%%", op->v[k].num * 100);
            else if (pd->kind == TS_P_NUM) snprintf(tmp, sizeof tmp, "%g", op->v[k].num);
            else if (pd->kind == TS_P_ENUM) choice_at(pd->choices, (int)op->v[k].num, tmp, sizeof tmp);
            else {
                for (int j = 0; j < op->v[k].n; j++) {
                    snprintf(tmp, sizeof tmp, j ? " %g" : "%g", op->v[k].list[j]);
                    append(&buf, &len, &cap, tmp);
                }
                tmp[0] = '\0';
            }
            append(&buf, &len, &cap, tmp);
        }
    }
    return buf;
}

static ts_status ts_chain_validate(ts_chain *chain, const char *text, ts_err *err);
static ts_status chain_parse(const char *text, ts_chain **out, ts_err *err);

/* text without the spaces beside ',', '=' and ':' ("gauss = 2" reads as
 * "gauss=2"); spaces inside a value (the taps of conv) stay. malloc'd. */
static char *without_loose_spaces(const char *text)
{
    size_t n = strlen(text);
    char *t = malloc(n + 1), *w = t;
    if (!t) return NULL;
    for (size_t i = 0; i < n; i++) {
        if (text[i] == ' ') {
            size_t j = i;
            while (j < n && text[j] == ' ') j++;
            int before = j < n && strchr(",=:", text[j]), after = w > t && strchr(",=:", w[-1]);
            if (before || after) { i = j - 1; continue; }
        }
        *w++ = text[i];
    }
    *w = '\0';
    return t;
}

ts_status ts_chain_parse(const char *text, ts_chain **out, ts_err *err)
{
    char *tidy = without_loose_spaces(text ? text : "");
    if (!tidy) return ts_err_set(err, TS_E_NOMEM, "out of memory parsing the op chain");
    ts_status st = chain_parse(tidy, out, err);
    free(tidy);
    return st;
}

static ts_status chain_parse(const char *text, ts_chain **out, ts_err *err)
{
    parser p = { text, err };
    ts_chain *c = calloc(1, sizeof *c);
    if (!c) return ts_err_set(err, TS_E_NOMEM, "out of memory parsing the op chain");
    *out = NULL;
    const char *s = p.text;
    while (*s == ' ') s++;
    if (*s) {
        size_t count = 1;
        for (const char *q = s; *q; q++) count += *q == ',';
        c->ops = calloc(count, sizeof *c->ops);
        if (!c->ops) { ts_chain_free(c); return ts_err_set(err, TS_E_NOMEM, "out of memory parsing the op chain"); }
        const char *q = s;
        for (;;) {
            size_t len = strcspn(q, ",");
            size_t trimmed = len;
            while (trimmed && q[trimmed - 1] == ' ') trimmed--;
            while (trimmed && *q == ' ') { q++; trimmed--; len--; }
            ts_status st = parse_op(&p, q, trimmed, &c->ops[c->n]);
            c->n++;
            if (st != TS_OK) { ts_chain_free(c); return st; }
            if (q[len] == '\0') break;
            q += len + 1;
        }
    }
    ts_status st = ts_chain_validate(c, p.text, err);
    if (st != TS_OK) { ts_chain_free(c); return st; }
    c->text = describe(c);
    if (!c->text) { ts_chain_free(c); return ts_err_set(err, TS_E_NOMEM, "out of memory"); }
    *out = c;
    return TS_OK;
}

/* Checks that need several parameters at once: each op's own validate. */
static ts_status ts_chain_validate(ts_chain *chain, const char *text, ts_err *err)
{
    for (int i = 0; i < chain->n; i++) {
        const ts_user_op *op = &chain->ops[i];
        ts_status st = op->def->validate ? op->def->validate(op, text, err) : TS_OK;
        if (st != TS_OK) return st;
    }
    return TS_OK;
}

char *ts_chain_text(const ts_chain *c) { return describe(c); }

int ts_user_op_copy(ts_user_op *to, const ts_user_op *from)
{
    int ok = 1;
    *to = *from;
    for (int k = 0; k < TS_MAX_PARAMS; k++) {
        if (!from->v[k].list) continue;
        size_t n = (size_t)(from->v[k].n > 0 ? from->v[k].n : 1);
        if ((to->v[k].list = malloc(sizeof *to->v[k].list * n)) != NULL)
            memcpy(to->v[k].list, from->v[k].list, sizeof *to->v[k].list * (size_t)from->v[k].n);
        else ok = 0;
    }
    return ok;
}

const char *ts_chain_compare_default(void) { return "scale=2,rotate=deg=10,scale=0.5"; }

ts_status ts_chain_fit_width(int w, ts_chain **out, ts_err *err)
{
    char text[64];
    snprintf(text, sizeof text, "resize=w=%d:interp=area", w);
    return ts_chain_parse(text, out, err);
}

ts_status ts_chain_op(const ts_chain *chain, int k, ts_chain **out, ts_err *err)
{
    *out = NULL;
    if (!chain || k < 0 || k >= chain->n) return ts_err_set(err, TS_E_ARG, "the chain has no op %d", k + 1);
    ts_chain *c = calloc(1, sizeof *c);
    if (c && (c->ops = calloc(1, sizeof *c->ops)) != NULL) {
        c->n = 1;
        if (ts_user_op_copy(&c->ops[0], &chain->ops[k]) && (c->text = describe(c)) != NULL) {
            *out = c;
            return TS_OK;
        }
    }
    ts_chain_free(c);
    return ts_err_set(err, TS_E_NOMEM, "out of memory");
}

int ts_chain_op_has_texture_path(const ts_chain *chain, int k)
{
    if (!chain || k < 0 || k >= chain->n) return 0;
    ts_chain one = { 1, &chain->ops[k], NULL };
    ts_plan plan;
    if (ts_plan_make(&one, 64, 64, 3, TS_U8, &plan, NULL) != TS_OK) return 0;
    int texture = 0;
    for (int i = 0; i < plan.n; i++) {
        const tsk_kind_info *info = tsk_kind_info_of(plan.ops[i].kind);
        texture |= info && info->has_texture_path;
    }
    ts_plan_free(&plan);
    return texture;
}

void ts_chain_free(ts_chain *chain)
{
    if (!chain) return;
    for (int i = 0; i < chain->n; i++)
        for (int k = 0; k < TS_MAX_PARAMS; k++) free(chain->ops[i].v[k].list);
    free(chain->ops);
    free(chain->text);
    free(chain);
}

int ts_chain_length(const ts_chain *chain) { return chain ? chain->n : 0; }
const char *ts_chain_describe(const ts_chain *chain) { return chain && chain->text ? chain->text : ""; }

ts_status ts_chain_prepend_orientation(ts_chain *chain, int orientation, ts_err *err)
{
    if (orientation < 1 || orientation > 8)
        return ts_err_set(err, TS_E_ARG, "EXIF orientation %d is not 1..8", orientation);
    if (orientation == 1) return TS_OK;
    ts_user_op *ops = realloc(chain->ops, sizeof *ops * (size_t)(chain->n + 1));
    if (!ops) return ts_err_set(err, TS_E_NOMEM, "out of memory");
    chain->ops = ops;
    memmove(ops + 1, ops, sizeof *ops * (size_t)chain->n);
    memset(&ops[0], 0, sizeof ops[0]);
    ops[0].def = &ts_ops[TS_OP_ORIENT];
    set_defaults(&ops[0]);
    ops[0].v[P_ORIENT_CODE].num = orientation;
    ops[0].v[P_ORIENT_CODE].given = 1;
    chain->n++;
    char *text = describe(chain);
    if (!text) return ts_err_set(err, TS_E_NOMEM, "out of memory");
    free(chain->text);
    chain->text = text;
    return TS_OK;
}

void ts_ops_list(ts_line_fn fn, void *ctx)
{
    char line[512];
    for (int i = 0; i < TS_OP_COUNT; i++) {
        const ts_op_def *d = &ts_ops[i];
        snprintf(line, sizeof line, "%-10s %s", d->name, d->help);
        fn(ctx, line);
        for (int k = 0; k < nparams(d); k++) {
            const ts_param_def *pd = &d->params[k];
            char deflt[96];
            if (pd->kind == TS_P_ENUM) snprintf(deflt, sizeof deflt, "%s (default %s)", pd->choices, pd->def);
            else if (pd->kind == TS_P_LIST) snprintf(deflt, sizeof deflt, "list of numbers");
            else snprintf(deflt, sizeof deflt, "number, default %s", pd->def);
            snprintf(line, sizeof line, "           %s%-10s %-40s %s", k < d->npositional ? "*" : " ",
                     pd->key, deflt, pd->help);
            fn(ctx, line);
        }
    }
    fn(ctx, "");
    fn(ctx, "Chain: ops joined by ','; parameters name=v (the starred ones) or name=k=v:k=v.");
    fn(ctx, "Example: matrix=sepia,gauss=sigma=1.5,sharpen=amount=0.6,rot90,resize=w=1920:h=-1");
}
