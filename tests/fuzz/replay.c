/* replay.c - main() for a harness without libFuzzer: every file named on the
 * command line (a saved corpus, crashes included) through the harness once;
 * prints "N passed, 0 failed" (a failing input aborts, which the caller sees). */
#include "fuzz.h"

int main(int argc, char **argv)
{
    int n = 0;
    for (int i = 1; i < argc; i++) {
        FILE *fp = fopen(argv[i], "rb");
        if (!fp) {
            fprintf(stderr, "replay: cannot open %s\n", argv[i]);
            printf("%d passed, 1 failed\n", n);
            return 1;
        }
        static uint8_t buf[1 << 22];
        size_t len = fread(buf, 1, sizeof buf, fp);
        fclose(fp);
        LLVMFuzzerTestOneInput(buf, len);
        n++;
    }
    printf("%d passed, 0 failed\n", n);
    return 0;
}
