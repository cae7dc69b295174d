/* gpu_codec.h - (internal) JPEG decode and encode on the GPU with nvJPEG
 * (pipeline/codec/codec_nvjpeg.c). Built only where CMake found CUDA::nvjpeg
 * (TS_HAVE_NVJPEG); elsewhere create says so and callers use the CPU
 * codecs. Headers, limits, EXIF orientation, ICC and XMP are read and
 * written on the CPU, by codec_jpeg.c, exactly as for CPU decodes.
 *
 * A codec (one per device) holds the nvJPEG library handle and, with the
 * hardware decoder, the thread that decodes the coders' files in batches;
 * a coder (one per thread) holds the GPU_HYBRID decoder (for progressive
 * files, and all files without the hardware decoder), the encode state, a
 * stream and buffers. */
#ifndef TS_GPU_CODEC_H
#define TS_GPU_CODEC_H

#include "tilestream.h"

typedef struct ts_gpu_codec ts_gpu_codec;
typedef struct ts_gpu_coder ts_gpu_coder;

/* 1 when this build has nvJPEG. */
int ts_gpu_codec_built(void);
/* The library on device; *hardware = 1 when the hardware JPEG decoder
 * (A100, H100, H200) is there, else the hybrid backend is used. */
ts_status ts_gpu_codec_create(int device, ts_gpu_codec **out, int *hardware, ts_err *err);
void ts_gpu_codec_destroy(ts_gpu_codec *c);
/* The hardware decoder's state is made beside the first files (a few tenths
 * of a second; until then GPU_HYBRID decodes them all). Waits until it is
 * made; 1 when the hardware decoder takes files now, 0 when it never will. */
int ts_gpu_codec_wait_hardware(ts_gpu_codec *c);
/* No more files for the hardware decoder: its state (a tenth to a third of
 * a second to release) goes now, beside the run's last encodes, rather
 * than in ts_gpu_codec_destroy. Files decoded after this go to GPU_HYBRID. */
void ts_gpu_codec_end_decoding(ts_gpu_codec *c);
ts_status ts_gpu_coder_create(ts_gpu_codec *c, ts_gpu_coder **out, ts_err *err);
void ts_gpu_coder_destroy(ts_gpu_coder *k);

/* Decode a JPEG on the device into img: its pixels stay on the device,
 * allocated from device_alloc, or with device_alloc NULL come back to host
 * memory from opts->allocator.
 * *cpu = 1 (any status) means: this file is not for nvJPEG (CMYK, grey,
 * 12-bit, not ending with EOI, or nvJPEG refused it): decode it on the
 * CPU. With *cpu = 0 a failure is the file's (limits, header). */
ts_status ts_gpu_decode_file(ts_gpu_coder *k, const char *path, const ts_load_opts *opts,
                             const ts_allocator *device_alloc, ts_image *img, int *cpu, ts_err *err);
/* Encode an 8-bit RGB image (its pixels in device memory when on_device,
 * else in host memory) as JPEG at quality (4:2:0, as the CPU writer) and
 * write it atomically with img's metadata. *cpu = 1: not for the GPU
 * (grey, alpha, 16-bit, or nvJPEG refused it): use ts_image_save. */
ts_status ts_gpu_save_jpeg(ts_gpu_coder *k, const char *path, const ts_image *img, int on_device, int quality,
                           int *cpu, ts_err *err);

#endif
