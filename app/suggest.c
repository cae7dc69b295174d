/* suggest.c - "did you mean": the library's nearest word, the one the
 * op-chain parser uses, so a misspelt option or command is answered as a
 * misspelt op is. */
#include "cli.h"

const char *cli_nearest(const char *word, const char *const *cands, int ncands)
{
    return ts_nearest_word(word, cands, ncands);
}
