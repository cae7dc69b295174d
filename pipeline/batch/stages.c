/* stages.c - what one image of a run goes through on a worker: its
 * probe (what it will hold in memory, its chain), its decode, the ops on
 * the CPU, its encode; each records its time in the image's result and
 * its stage in the trace, and a failure names the file. Which worker does
 * what, and when, is batch.c's; the GPU's part is gpu_feed.c's. */
#include "batch_internal.h"
#include "outputs.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static uint64_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

/* Job i's chain (ts_chain_for_image) for an image of w x h stored pixels
 * with EXIF orientation o: the orientation first, unless
 * --keep-orientation, and shrink on load where shrink allows (a JPEG of 8
 * bits; nvJPEG decodes whole images only, and --no-shrink-on-load). */
static void plan_chain(batch *b, job *j, int w, int h, int o, int shrink)
{
    ts_chain_free(j->chain);
    j->orientation = b->o->keep_orientation ? 1 : o;
    shrink = shrink && !b->o->no_shrink_on_load && b->o->codec != TS_CODEC_GPU;
    if (ts_chain_for_image(b->chain, w, h, j->orientation, shrink, &j->scale, &j->chain, NULL) != TS_OK) j->scale = 1;
}

/* What job i will hold in memory once decoded: its pixels (at the decode
 * scale), a progressive JPEG's coefficient arrays while decoding, and the
 * output; on the CPU also the ops' tile buffers (cpu_extra: two images'
 * worth; the tiles in flight hold less on the usual chains). Decides
 * shrink on load.
 * Without a readable header the decode will fail anyway: the file's size. */
void ts_batch_probe(batch *b, int i)
{
    ts_image_result *res = &b->r->images[i];
    job *j = &b->jobs[i];
    ts_image_info info;
    ts_err e = { 0 };
    j->scale = 1;
    j->orientation = 1;
    if (ts_image_probe(res->input, &info, &e) != TS_OK) {
        j->cost = file_size(res->input);
        return;
    }
    plan_chain(b, j, info.w, info.h, info.orientation, info.format == TS_FMT_JPEG && info.bit_depth == 8);
    /* Progressive JPEGs are for nvJPEG too: not its hardware decoder, but
     * its GPU_HYBRID backend, which leaves the cores nearly free where
     * libjpeg-turbo keeps them busy (codec_nvjpeg.c). */
    j->cpu_decode = info.format != TS_FMT_JPEG || info.c != 3 || info.bit_depth != 8;
    int c = info.c;
    uint64_t w = ((uint64_t)info.w + (uint64_t)j->scale - 1) / (uint64_t)j->scale;
    uint64_t h = ((uint64_t)info.h + (uint64_t)j->scale - 1) / (uint64_t)j->scale;
    uint64_t px = (uint64_t)c * (uint64_t)info.type, in = w * h * px, out = in;
    const ts_chain *chain = ts_batch_chain_for(b, j);
    int ow = 0, oh = 0;
    if (ts_chain_out_size(chain, (int)w, (int)h, c, &ow, &oh, NULL) == TS_OK) out = (uint64_t)ow * (uint64_t)oh * px;
    j->cost = in + out;
    if (info.format == TS_FMT_JPEG && info.progressive) j->cost += (uint64_t)info.w * info.h * (uint64_t)c * 2;
    if (ts_chain_length(chain) > 0) j->cpu_extra = 2 * (in > out ? in : out);
}

/* A note of ts_image_save's with its "OUTPUT: " prefix taken off: the
 * warning goes beside the input's name, and the output's is in the report. */
static const char *without_path(const char *note, const char *output)
{
    const size_t n = strlen(output);
    return strncmp(note, output, n) == 0 && note[n] == ':' && note[n + 1] == ' ' ? note + n + 2 : note;
}

/* Add what a written image left out to its warning ("; " between two). */
static void note_warning(ts_image_result *res, const char *what)
{
    const size_t n = strlen(res->warning);
    snprintf(res->warning + n, sizeof res->warning - n, "%s%s", n ? "; " : "", what);
}

/* --max-pixels holds for every image the chain makes, not only inputs
 * (scale=40 on a photo would otherwise write gigabytes): 0 and job i
 * failed, its decoded input freed, when one is over. */
static int sizes_within_limit(batch *b, int i)
{
    job *j = &b->jobs[i];
    if (j->in.exif_dropped) note_warning(&b->r->images[i], "its EXIF block does not parse: not copied");
    /* the header the probe read (if it could) said another orientation: the decoded image's holds */
    if (!b->o->keep_orientation && j->in.orientation != j->orientation) {
        int scale = j->scale;   /* decoded at it already */
        plan_chain(b, j, 0, 0, j->in.orientation, 0);
        j->scale = scale;
    }
    ts_err e = { 0 }, named;
    ts_status st = ts_chain_check_pixels(ts_batch_chain_for(b, j), j->in.w, j->in.h, j->in.c, b->o->max_pixels, &e);
    if (st == TS_OK) return 1;
    ts_image_free(&j->in);
    ts_err_set(&named, st, "%s: %s", b->r->images[i].input, e.msg);
    ts_batch_fail(b, i, st, &named);
    return 0;
}

/* The codecs of job i's backend: nvJPEG may take part on the GPU's. An
 * early image (the CPU codecs) decodes before the GPU's session is there. */
static ts_codec_session *codecs_for(batch *b, const job *j)
{
    return j->on_gpu && !j->early ? b->gpu->codecs : b->cpu_codecs;
}

/* Decode job i (no lock held) on worker w. Returns 1 if it is ready for
 * the ops. JPEGs that suit nvJPEG go to it when the run has it (the
 * session decides and falls back to the CPU decoders inside). With
 * --codec auto the first files wait for nvJPEG's set-up: handing them to
 * the CPU codecs meanwhile, in input order or out of it, made the folder
 * job slower every way it was tried (docs/measurements/batch.md). */
int ts_batch_decode(batch *b, int i, int lane, int w)
{
    ts_image_result *res = &b->r->images[i];
    job *j = &b->jobs[i];
    ts_err e = { 0 };
    ts_allocator *alloc = j->early ? (b->early_alloc.alloc ? &b->early_alloc : NULL)
                          : j->on_gpu ? &b->gpu_alloc : b->cpu_alloc.alloc ? &b->cpu_alloc : NULL;
    ts_load_opts lo = { b->o->max_pixels, alloc, b->o->accept_damaged, b->o->max_work };
    double t0 = ts_now();
    int on_gpu = 0;
    ts_status st = ts_codec_session_load(codecs_for(b, j), w, res->input, &lo, j->scale,
                                         !j->cpu_decode && !b->o->accept_damaged, &j->in, &on_gpu, &e);
    double t1 = ts_now();
    res->decode_s = t1 - t0;
    res->in_bytes = file_size(res->input);
    if (st != TS_OK) { ts_batch_fail(b, i, st, &e); return 0; }
    if (!sizes_within_limit(b, i)) return 0;
    res->w = j->in.w * j->scale; res->h = j->in.h * j->scale; res->c = j->in.c; res->type = j->in.type;
    ts_batch_trace(b, lane, on_gpu ? "decode (gpu)" : j->scale > 1 ? "decode (shrunk)" : "decode", t0, t1, ts_batch_image_bytes(&j->in), i);
    return 1;
}

void ts_batch_cpu_ops(batch *b, int i, int lane)
{
    job *j = &b->jobs[i];
    ts_image_result *res = &b->r->images[i];
    ts_err e = { 0 };
    double t0 = ts_now();
    ts_status st = ts_cpu_run_pool(ts_batch_chain_for(b, j), &j->in, b->o->tile_w, b->o->tile_h, b->pool, &j->out, &e);
    double t1 = ts_now();
    res->ops_s = t1 - t0;
    if (st != TS_OK) {
        ts_err named;
        ts_err_set(&named, st, "%s: %s", res->input, e.msg);
        ts_batch_fail(b, i, st, &named);
        return;
    }
    ts_batch_trace(b, lane, "ops (cpu)", t0, t1, ts_batch_image_bytes(&j->in) + ts_batch_image_bytes(&j->out), i);
}

void ts_batch_encode(batch *b, int i, int lane, int w)
{
    job *j = &b->jobs[i];
    ts_image_result *res = &b->r->images[i];
    ts_err e = { 0 };
    ts_save_opts so = { j->out_format, b->o->quality, b->o->png_level, 0 };
    /* Carry the ICC profile, EXIF and XMP over; the writers set the EXIF
     * orientation to 1 where the chain applied it, else keep the input's. */
    ts_image_copy_metadata(&j->out, &j->in, NULL);
    if (b->o->keep_orientation) j->out.orientation = j->in.orientation;
    res->out_w = j->out.w; res->out_h = j->out.h;
    double t0 = ts_now();
    int on_gpu = 0;
    ts_status st = ts_make_parent_dirs(res->output, &e);
    if (st == TS_OK && !ts_format_keeps_alpha(j->out_format, j->out.c)) {
        ts_image flat;
        if ((st = ts_image_flatten(&j->out, b->background, &flat, &e)) == TS_OK) {
            ts_image_free(&j->out);
            j->out = flat;
            __atomic_add_fetch(&b->flattened, 1, __ATOMIC_RELAXED);
        }
    }
    if (st == TS_OK)
        st = ts_codec_session_save(codecs_for(b, j), w, res->output, &j->out, &j->out_on_device, &so, ts_batch_engine_to_host, b,
                                   &on_gpu, &e);
    double t1 = ts_now();
    res->encode_s = t1 - t0;
    if (st != TS_OK) { ts_batch_fail(b, i, st, &e); return; }
    if (e.msg[0]) note_warning(res, without_path(e.msg, res->output));   /* written without an ICC profile libpng rejects */
    res->out_bytes = file_size(res->output);
    ts_batch_trace(b, lane, on_gpu ? "encode (gpu)" : "encode", t0, t1, ts_batch_image_bytes(&j->out), i);
}

