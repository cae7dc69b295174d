/* suggest.c - "did you mean": the nearest word by edit distance, with the
 * same thresholds as the op-chain parser (pipeline/chain.c), so a misspelt
 * option or command is answered as a misspelt op is. */
#include "cli.h"

#include <ctype.h>
#include <string.h>

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

const char *cli_nearest(const char *word, const char *const *cands, int ncands)
{
    const char *best = NULL;
    int best_d = 99;
    for (int i = 0; i < ncands; i++) {
        int d = edit_distance(word, cands[i]);
        if (d < best_d) { best_d = d; best = cands[i]; }
    }
    size_t len = strlen(word);
    int limit = len <= 3 ? 1 : len <= 6 ? 2 : 3;
    return best_d <= limit ? best : NULL;
}
