/* shrink.c - shrink on load: a chain that starts by shrinking (resize or
 * scale to half or less on both axes) lets a JPEG be decoded at 1/2, 1/4
 * or 1/8 of its size by libjpeg's DCT scaling, several times faster than
 * decoding it whole. The first op then becomes a resize from the reduced
 * image to exactly the size it would have made from the whole one, so
 * outputs keep their size. Decided here, on the parsed chain, because the
 * registry is the only place that knows ops by name. */
#include "chain.h"
#include "ops.h"
#include "plan.h"
#include "orient/ts_orient.h"

#include <stdlib.h>
#include <string.h>

/* A new chain: orientation o, a resize to the fw x fh the first op makes
 * (with its sampling and border; a cover or pad keeps its fit, gravity and
 * fill, the box in pixels; the rest stretch to exactly that size), then
 * chain's other ops. */
static ts_chain *shrunk_chain(const ts_chain *chain, int o, int fw, int fh, ts_err *err)
{
    const ts_user_op *first = &chain->ops[0];
    int is_resize = first->def == &ts_ops[TS_OP_RESIZE];
    ts_chain *c = calloc(1, sizeof *c);
    if (!c || !(c->ops = calloc((size_t)chain->n, sizeof *c->ops))) {
        free(c);
        ts_err_set(err, TS_E_NOMEM, "out of memory");
        return NULL;
    }
    c->n = chain->n;
    /* both ops take INTERP_PARAM and BORDER_PARAM("replicate"): the same choices */
    ts_user_op *r = &c->ops[0];
    int fit = is_resize ? ts_op_choice(first, P_RESIZE_FIT) : FIT_STRETCH;
    int boxed = is_resize && first->v[P_RESIZE_W].num > 0 && first->v[P_RESIZE_H].num > 0;
    if (is_resize) *r = *first;   /* no lists to copy: resize has none */
    r->def = &ts_ops[TS_OP_RESIZE];
    r->v[P_RESIZE_W] = (ts_param_value){ .num = fw, .given = 1 };
    r->v[P_RESIZE_H] = (ts_param_value){ .num = fh, .given = 1 };
    r->v[P_RESIZE_INTERP] = first->v[is_resize ? P_RESIZE_INTERP : P_SCALE_INTERP];
    r->v[P_RESIZE_BORDER] = first->v[is_resize ? P_RESIZE_BORDER : P_SCALE_BORDER];
    if (!(boxed && (fit == FIT_COVER || fit == FIT_PAD))) {
        r->v[P_RESIZE_FIT] = (ts_param_value){ .num = FIT_STRETCH, .given = 1 };
        r->v[P_RESIZE_GRAVITY] = (ts_param_value){ .num = GRAVITY_CENTRE };
        r->v[P_RESIZE_FILL] = (ts_param_value){ .num = 0 };
    }
    int ok = 1;
    for (int i = 1; i < chain->n; i++) ok &= ts_user_op_copy(&c->ops[i], &chain->ops[i]);
    if (!ok || ts_chain_prepend_orientation(c, o, err) != TS_OK || (!c->text && !(c->text = ts_chain_text(c)))) {
        ts_chain_free(c);
        ts_err_set(err, TS_E_NOMEM, "out of memory");
        return NULL;
    }
    return c;
}

int ts_chain_shrink_on_load(const ts_chain *chain, int w, int h, int orientation, ts_chain **out)
{
    *out = NULL;
    if (!chain || chain->n < 1) return 1;
    const ts_op_def *first = chain->ops[0].def;
    if (first != &ts_ops[TS_OP_RESIZE] && first != &ts_ops[TS_OP_SCALE]) return 1;
    int o = orientation >= 1 && orientation <= 8 ? orientation : 1;
    int swaps = ts_orient_swaps(o), ow = swaps ? h : w, oh = swaps ? w : h, fw = 0, fh = 0;
    ts_chain first_alone = { 1, chain->ops, NULL };
    if (ts_chain_out_size(&first_alone, ow, oh, 3, &fw, &fh, NULL) != TS_OK) return 1;
    /* Only scales that divide both sides: the reduced image then covers
     * exactly the same area (ceil(w / d) pixels of d would reach past a
     * side that d does not divide, shifting the resize by up to a pixel of
     * the reduced image at the far edge, a visible loss; see
     * docs/measurements/batch.md). Camera sizes are multiples of 8. */
    int scale = 1;
    for (int d = 8; d >= 2 && scale == 1; d /= 2)
        if ((int64_t)fw * d <= ow && (int64_t)fh * d <= oh && ow % d == 0 && oh % d == 0) scale = d;
    if (scale == 1) return 1;
    ts_chain *c = shrunk_chain(chain, o, fw, fh, NULL);
    if (!c) return 1;
    *out = c;
    return scale;
}

/* A copy of chain with orientation o in front. */
static ts_chain *oriented_copy(const ts_chain *chain, int o, ts_err *err)
{
    ts_chain *c = calloc(1, sizeof *c);
    if (!c || !(c->ops = calloc((size_t)chain->n + 1, sizeof *c->ops))) {
        free(c);
        ts_err_set(err, TS_E_NOMEM, "out of memory");
        return NULL;
    }
    int ok = 1;
    for (int i = 0; i < chain->n; i++, c->n++) ok &= ts_user_op_copy(&c->ops[i], &chain->ops[i]);
    if (!ok || ts_chain_prepend_orientation(c, o, err) != TS_OK) {
        ts_chain_free(c);
        ts_err_set(err, TS_E_NOMEM, "out of memory");
        return NULL;
    }
    return c;
}

ts_status ts_chain_for_image(const ts_chain *chain, int w, int h, int orientation, int shrink, int *scale,
                             ts_chain **out, ts_err *err)
{
    *scale = 1;
    *out = NULL;
    int o = orientation >= 1 && orientation <= 8 ? orientation : 1;   /* a value past 8 is no orientation */
    if (shrink && w > 0 && h > 0 && (*scale = ts_chain_shrink_on_load(chain, w, h, o, out)) > 1) return TS_OK;
    *scale = 1;
    if (o == 1) return TS_OK;
    return (*out = oriented_copy(chain, o, err)) ? TS_OK : TS_E_NOMEM;
}
