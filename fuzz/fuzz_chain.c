/* fuzz_chain.c - libFuzzer target: the op-chain parser on arbitrary text.
 * A chain that parses has a canonical description that must parse again
 * to the same description, an output size for a small image, and takes an
 * orientation in front. */
#include "tilestream.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    ts_chain *chain = NULL;
    ts_err err = {0};
    if (ts_chain_parse(text, &chain, &err) == TS_OK) {
        const char *canon = ts_chain_describe(chain);
        ts_chain *again = NULL;
        if (ts_chain_parse(canon, &again, &err) != TS_OK) {
            fprintf(stderr, "canonical text '%s' does not parse: %s\n", canon, err.msg);
            abort();
        }
        if (strcmp(ts_chain_describe(again), canon) != 0) {
            fprintf(stderr, "'%s' describes as '%s'\n", canon, ts_chain_describe(again));
            abort();
        }
        ts_chain_free(again);
        int w, h;
        ts_chain_out_size(chain, 37, 23, 3, &w, &h, &err);
        ts_chain_prepend_orientation(chain, 1 + (int)(size % 8), &err);
        ts_chain_out_size(chain, 37, 23, 3, &w, &h, &err);
        ts_chain_free(chain);
    } else if (err.msg[0] == '\0') {
        abort();                  /* a refusal always says why */
    }
    free(text);
    return 0;
}
