/* The physical limits the benchmark compares keystore against, measured in the same run:
 *   limits sign N        libsodium's own in-process signing loop over 32-byte payloads: prints signatures/s
 *   limits spawn N CMD…  runs CMD N times (stdin /dev/null), prints the median wall time per run in ms
 *   limits rss CMD…      runs CMD once (stdin /dev/null), prints its peak resident set size in KiB
 * Built by bench/sign.sh with the system libsodium.
 */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/wait.h>
#include <sys/resource.h>

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Runs `command` with stdin and stdout on /dev/null and waits; `usage` (if not NULL) gets its resource use.
 * Returns 0, or 1 (with a message) when it did not exit with status 0. */
static int run(char **command, struct rusage *usage) {
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        execvp(command[0], command);
        _exit(127);
    }
    int status;
    struct rusage ignored;
    wait4(pid, &status, 0, usage ? usage : &ignored);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "limits: %s failed (status %d)\n", command[0], status);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "sign") == 0) {
        if (sodium_init() < 0) return 1;
        long n = atol(argv[2]);
        unsigned char pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
        unsigned char payload[32], signature[crypto_sign_BYTES];
        crypto_sign_keypair(pk, sk);
        randombytes_buf(payload, sizeof payload);
        double start = seconds();
        for (long i = 0; i < n; i++) {
            payload[0] = (unsigned char)i;
            crypto_sign_detached(signature, NULL, payload, sizeof payload, sk);
        }
        double elapsed = seconds() - start;
        printf("%.0f\n", n / elapsed);
        return 0;
    }
    if (argc >= 4 && strcmp(argv[1], "spawn") == 0) {
        long n = atol(argv[2]);
        double *times = calloc(n, sizeof *times);
        for (long i = 0; i < n; i++) {
            double start = seconds();
            if (run(argv + 3, NULL) != 0) return 1;
            times[i] = (seconds() - start) * 1000;
        }
        qsort(times, n, sizeof *times, compare);
        printf("%.2f\n", times[n / 2]);
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "rss") == 0) {
        struct rusage usage;
        if (run(argv + 2, &usage) != 0) return 1;
        printf("%ld\n", usage.ru_maxrss);
        return 0;
    }
    fprintf(stderr, "usage: limits sign N | limits spawn N CMD... | limits rss CMD...\n");
    return 64;
}
