/* outputs.h - where a run writes, and what it may never write over
 * (pipeline/batch/outputs.c; private to the batch room). */
#ifndef TS_OUTPUTS_H
#define TS_OUTPUTS_H

#include "tilestream.h"

/* The checks before any work: the output format can be written by this
 * build, the name template is sound, and the output folder is (or can be
 * made) a writable folder. Nothing is created. */
ts_status ts_outputs_check_before_work(const ts_batch_opts *o, ts_err *err);

/* The output's path (malloc'd; NULL with e): OUTDIR/rel with *format's
 * extension, or --name's template expanded for rel and number; a template
 * whose names end in a format's extension sets *format to it when
 * --format is not given. */
char *ts_output_path(const ts_batch_opts *o, const char *rel, ts_format *format, int number, ts_err *e);

/* mkdir -p for the folder that holds path. */
ts_status ts_make_parent_dirs(const char *path, ts_err *err);

/* The rule that nothing is lost: an output may not be any input (after
 * links, by device and inode) unless --replace-input, and may not lead
 * outside OUTDIR through a link below it. Made once from the whole input
 * list, then asked per output. */
typedef struct ts_output_guard ts_output_guard;
ts_output_guard *ts_output_guard_make(const char *outdir, const ts_input_list *inputs);
/* TS_OK when output may be written for input; else TS_E_EXISTS with err
 * naming the input it would replace or the link that leaves OUTDIR. */
ts_status ts_output_guard_check(const ts_output_guard *g, const char *input, const char *output, int replace_input,
                                ts_err *err);
void ts_output_guard_free(ts_output_guard *g);

/* Plan every input's output: images[i] takes l's path as its input and
 * gets its output's name, or is refused (status and error set: a failed
 * entry, a bad name, the guard's rule, another input's output of the same
 * name) or skipped (--skip-existing); formats[i] is its output format and
 * needs_work[i] 1 when it goes on to be decoded. */
void ts_outputs_plan(const ts_batch_opts *o, ts_input_list *l, const int *numbers, const ts_output_guard *g,
                     ts_image_result *images, ts_format *formats, int *needs_work);

/* Remove what killed runs left in the folders of the outputs that need
 * work (each folder once; see ts_save_sweep_temps). */
void ts_outputs_sweep_temps(const ts_image_result *images, const int *needs_work, int n);

#endif
