/* main.c - parses a chain and runs it on a small image through the public
 * header alone; prints the chain's canonical text. */
#include <tilestream.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    ts_err err = { 0 };
    ts_chain *chain = NULL;
    ts_image in = { 0 }, out = { 0 };
    if (ts_chain_parse("gauss=1,rot90", &chain, &err) != TS_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    if (ts_image_alloc(&in, 8, 5, 3, TS_U8, 0, NULL, &err) != TS_OK) return 1;
    memset(in.data, 100, in.stride * (size_t)in.h);
    if (ts_cpu_run(chain, &in, 0, 0, &out, &err) != TS_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    printf("%s %dx%d %s\n", ts_chain_describe(chain), out.w, out.h, ts_status_name(TS_OK));
    int ok = out.w == 5 && out.h == 8 && out.data[0] == 100;
    ts_image_free(&in);
    ts_image_free(&out);
    ts_chain_free(chain);
    return ok ? 0 : 1;
}
