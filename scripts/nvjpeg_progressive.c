/* nvjpeg_progressive.c - how fast can progressive JPEGs be decoded on a GPU
 * machine? libjpeg-turbo (whole decode, and coefficients alone) against
 * nvJPEG's HYBRID and GPU_HYBRID backends through the decoupled API, T
 * threads each with its own state and stream, over the files given.
 * The figures behind the GPU_HYBRID decoder in pipeline/codec/codec_nvjpeg.c.
 * Not part of the build (it needs nvJPEG, which the build keeps optional):
 *
 *   nvcc -x c -O2 scripts/nvjpeg_progressive.c -o /tmp/nvjpeg_progressive \
 *        -lnvjpeg -ljpeg -lpthread
 *   /tmp/nvjpeg_progressive 16 FILE.jpg...     (progressive files)
 *
 * Per line: wall time, CPU time of the threads (a thread waiting in
 * cudaStreamSynchronize spins, so that counts as CPU time), the state set-up
 * per thread, and for nvJPEG the time in the host part (Huffman decode on
 * the CPU for HYBRID) and in transfer + device part + wait. Each runs twice.
 * MODE0=N starts at mode N (0 libjpeg-turbo, 1 coefficients, 2 HYBRID,
 * 3 GPU_HYBRID). */
#include <stdio.h>   /* before jpeglib.h, which needs FILE */
#include <cuda_runtime_api.h>
#include <jpeglib.h>
#include <nvjpeg.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static double thread_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

#define NV(x)                                                                        \
    do {                                                                             \
        nvjpegStatus_t s_ = (x);                                                     \
        if (s_) {                                                                    \
            fprintf(stderr, "%s:%d %s -> status %d\n", __FILE__, __LINE__, #x, s_); \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

typedef struct file { unsigned char *data; long len; int w, h; } file;

enum { LIBJPEG, COEFFICIENTS, HYBRID, GPU_HYBRID, MODES };
static const char *mode_name[MODES] = {"libjpeg-turbo, whole decode", "libjpeg-turbo, coefficients only",
                                       "nvJPEG HYBRID (decoupled)", "nvJPEG GPU_HYBRID (decoupled)"};

static file *files;
static int n_files, next_file, mode;
static nvjpegHandle_t handle;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static double cpu_sum, setup_sum, host_sum, device_sum, mp_sum;

static int take(void)
{
    pthread_mutex_lock(&lock);
    int i = next_file < n_files ? next_file++ : -1;
    pthread_mutex_unlock(&lock);
    return i;
}

static void libjpeg_decode(file *f, int whole)
{
    struct jpeg_decompress_struct d;
    struct jpeg_error_mgr e;
    d.err = jpeg_std_error(&e);
    jpeg_create_decompress(&d);
    jpeg_mem_src(&d, f->data, (unsigned long)f->len);
    jpeg_read_header(&d, TRUE);
    if (whole) {
        d.out_color_space = JCS_RGB;
        jpeg_start_decompress(&d);
        unsigned char *px = malloc((size_t)d.output_width * d.output_height * 3);
        while (d.output_scanline < d.output_height) {
            unsigned char *row = px + (size_t)d.output_scanline * d.output_width * 3;
            jpeg_read_scanlines(&d, &row, 1);
        }
        free(px);
    } else {
        jpeg_read_coefficients(&d);
    }
    jpeg_finish_decompress(&d);
    f->w = (int)d.image_width;
    f->h = (int)d.image_height;
    jpeg_destroy_decompress(&d);
}

static void *worker(void *arg)
{
    (void)arg;
    double c0 = thread_cpu(), setup = 0, host = 0, device = 0, mp = 0;
    nvjpegJpegDecoder_t dec = NULL;
    nvjpegJpegState_t state = NULL;
    nvjpegBufferPinned_t pinned = NULL;
    nvjpegBufferDevice_t devbuf = NULL;
    nvjpegDecodeParams_t params = NULL;
    nvjpegJpegStream_t stream = NULL;
    cudaStream_t cs = NULL;
    unsigned char *out = NULL;
    size_t out_cap = 0;
    if (mode >= HYBRID) {
        double t = now();
        cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking);
        NV(nvjpegDecoderCreate(handle, mode == HYBRID ? NVJPEG_BACKEND_HYBRID : NVJPEG_BACKEND_GPU_HYBRID, &dec));
        NV(nvjpegDecoderStateCreate(handle, dec, &state));
        NV(nvjpegBufferPinnedCreate(handle, NULL, &pinned));
        NV(nvjpegBufferDeviceCreate(handle, NULL, &devbuf));
        NV(nvjpegStateAttachPinnedBuffer(state, pinned));
        NV(nvjpegStateAttachDeviceBuffer(state, devbuf));
        NV(nvjpegDecodeParamsCreate(handle, &params));
        NV(nvjpegDecodeParamsSetOutputFormat(params, NVJPEG_OUTPUT_RGBI));
        NV(nvjpegJpegStreamCreate(handle, &stream));
        setup = now() - t;
    }
    for (int i; (i = take()) >= 0;) {
        file *f = &files[i];
        if (mode < HYBRID) {
            libjpeg_decode(f, mode == LIBJPEG);
        } else {
            unsigned w, h;
            NV(nvjpegJpegStreamParse(handle, f->data, (size_t)f->len, 0, 0, stream));
            NV(nvjpegJpegStreamGetFrameDimensions(stream, &w, &h));
            f->w = (int)w;
            f->h = (int)h;
            if ((size_t)w * h * 3 > out_cap) {
                cudaFree(out);
                out_cap = (size_t)w * h * 3;
                cudaMalloc((void **)&out, out_cap);
            }
            nvjpegImage_t img;
            memset(&img, 0, sizeof img);
            img.channel[0] = out;
            img.pitch[0] = (size_t)w * 3;
            double a = now();
            NV(nvjpegDecodeJpegHost(handle, dec, state, params, stream));
            double b = now();
            NV(nvjpegDecodeJpegTransferToDevice(handle, dec, state, stream, cs));
            NV(nvjpegDecodeJpegDevice(handle, dec, state, &img, cs));
            cudaStreamSynchronize(cs);
            host += b - a;
            device += now() - b;
        }
        mp += f->w * (double)f->h / 1e6;
    }
    if (mode >= HYBRID) {
        nvjpegJpegStreamDestroy(stream);
        nvjpegDecodeParamsDestroy(params);
        nvjpegJpegStateDestroy(state);
        nvjpegBufferPinnedDestroy(pinned);
        nvjpegBufferDeviceDestroy(devbuf);
        nvjpegDecoderDestroy(dec);
        cudaFree(out);
        cudaStreamDestroy(cs);
    }
    double cpu = thread_cpu() - c0;
    pthread_mutex_lock(&lock);
    cpu_sum += cpu;
    setup_sum += setup;
    host_sum += host;
    device_sum += device;
    mp_sum += mp;
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s THREADS FILE.jpg...\n", argv[0]);
        return 2;
    }
    int threads = atoi(argv[1]);
    if (threads < 1 || threads > 256) threads = 16;
    n_files = argc - 2;
    files = calloc((size_t)n_files, sizeof *files);
    for (int i = 0; i < n_files; i++) {
        FILE *f = fopen(argv[i + 2], "rb");
        if (!f) { perror(argv[i + 2]); return 1; }
        fseek(f, 0, SEEK_END);
        files[i].len = ftell(f);
        rewind(f);
        files[i].data = malloc((size_t)files[i].len);
        if (fread(files[i].data, 1, (size_t)files[i].len, f) != (size_t)files[i].len) { perror(argv[i + 2]); return 1; }
        fclose(f);
    }
    double t = now();
    cudaFree(0);
    printf("CUDA context %.3f s\n", now() - t);
    t = now();
    NV(nvjpegCreateEx(NVJPEG_BACKEND_HARDWARE, NULL, NULL, 0, &handle));
    printf("nvjpegCreateEx (hardware backend) %.3f s\n", now() - t);
    const char *m0 = getenv("MODE0");
    for (mode = m0 ? atoi(m0) : 0; mode < MODES; mode++) {
        for (int rep = 0; rep < 2; rep++) {
            pthread_t th[256];
            next_file = 0;
            cpu_sum = setup_sum = host_sum = device_sum = mp_sum = 0;
            t = now();
            for (int k = 0; k < threads; k++) pthread_create(&th[k], NULL, worker, NULL);
            for (int k = 0; k < threads; k++) pthread_join(th[k], NULL);
            double wall = now() - t;
            printf("%-34s T=%-3d %d files %.0f MP: wall %.3f s (%.0f MP/s), CPU %.2f s, set-up %.3f s a thread",
                   mode_name[mode], threads, n_files, mp_sum, wall, mp_sum / wall, cpu_sum, setup_sum / threads);
            if (mode >= HYBRID) printf(", host part %.2f s, transfer + device + wait %.2f s", host_sum, device_sum);
            printf("\n");
        }
    }
    nvjpegDestroy(handle);
    return 0;
}
