/* The physical limits the benchmark compares keystore against, measured in the same run:
 *   limits sign N        libsodium's own in-process signing loop over 32-byte payloads: prints signatures/s
 *   limits spawn N CMD…  runs CMD N times (stdin /dev/null), prints the median wall time per run in ms
 *   limits rss CMD…      runs CMD once (stdin /dev/null), prints its peak resident set size in KiB
 *   limits agent SOCKET N [REQUEST]
 *                        N signPayload round trips to a keystore agent, one at a time on one connection:
 *                        prints the median and 99th percentile in ms. REQUEST: a file whose first line is the
 *                        request to send instead (a signTransaction, say), the same each time
 *   limits agent-rate SOCKET N CONNECTIONS WINDOW
 *                        N signPayload requests over CONNECTIONS connections, one thread each, with at most
 *                        WINDOW requests in flight per connection (1: request and answer in turn): prints
 *                        signatures/s. Every answer is checked to be a result.
 *   limits durable-write DIR N
 *                        N durable replacements of a small file in DIR, as keystore writes one (a temporary file,
 *                        fsync, rename over the file, fsync of the directory): prints the median in ms
 * Built by bench/sign.sh and bench/agent.sh with the system libsodium.
 */
#define _GNU_SOURCE /* memmem */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/wait.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <pthread.h>

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

/* One connection to the agent at `path`, or exits. */
static int agent_connect(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, path, sizeof address.sun_path - 1);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        perror("limits: connect");
        exit(1);
    }
    return fd;
}

/* A signPayload request for 32 bytes (like a transaction hash), as the line it is sent as. */
static int agent_request(char *out, size_t size, long id) {
    unsigned char payload[32];
    char encoded[64];
    memset(payload, 0, sizeof payload);
    memcpy(payload, &id, sizeof id);
    sodium_bin2base64(encoded, sizeof encoded, payload, sizeof payload, sodium_base64_VARIANT_ORIGINAL);
    return snprintf(out, size, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"signPayload\",\"params\":{\"payload\":\"%s\"}}\n",
                    id, encoded);
}

/* Reads answer lines from `fd` until `count` have come; exits on an error answer or a closed connection. */
typedef struct { int fd; char buffer[1 << 16]; size_t used; } reader_t;

static void agent_answers(reader_t *reader, long count) {
    while (count > 0) {
        char *newline;
        while ((newline = memchr(reader->buffer, '\n', reader->used)) != NULL) {
            size_t length = newline - reader->buffer + 1;
            if (!memmem(reader->buffer, length, "\"result\"", 8)) {
                fprintf(stderr, "limits: the agent answered %.*s", (int)length, reader->buffer);
                exit(1);
            }
            memmove(reader->buffer, newline + 1, reader->used - length);
            reader->used -= length;
            if (--count == 0) return;
        }
        ssize_t got = read(reader->fd, reader->buffer + reader->used, sizeof reader->buffer - reader->used);
        if (got <= 0) {
            fprintf(stderr, "limits: the agent closed the connection\n");
            exit(1);
        }
        reader->used += got;
    }
}

typedef struct { const char *path; long requests; long window; } rate_job_t;

static void *agent_rate_thread(void *argument) {
    rate_job_t *job = argument;
    reader_t *reader = calloc(1, sizeof *reader);
    reader->fd = agent_connect(job->path);
    char line[256];
    long sent = 0, answered = 0;
    while (answered < job->requests) {
        while (sent < job->requests && sent - answered < job->window) {
            int length = agent_request(line, sizeof line, sent++);
            if (write(reader->fd, line, length) != length) { perror("limits: write"); exit(1); }
        }
        agent_answers(reader, 1);
        answered++;
    }
    close(reader->fd);
    free(reader);
    return NULL;
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
    if (argc == 3 && strcmp(argv[1], "argon2id") == 0) {
        /* N Argon2id derivations at libsodium's interactive cost, as a vault at --kdf interactive makes: the
           milliseconds they take in all. */
        if (sodium_init() < 0) return 1;
        long n = atol(argv[2]);
        unsigned char key[32], salt[crypto_pwhash_SALTBYTES] = {0};
        double start = seconds();
        for (long i = 0; i < n; i++) {
            salt[0] = (unsigned char)i;
            if (crypto_pwhash(key, sizeof key, "270419", 6, salt, crypto_pwhash_OPSLIMIT_INTERACTIVE,
                              crypto_pwhash_MEMLIMIT_INTERACTIVE, crypto_pwhash_ALG_ARGON2ID13) != 0) return 1;
        }
        printf("%.0f\n", (seconds() - start) * 1000);
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
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "agent") == 0) {
        if (sodium_init() < 0) return 1;
        long n = atol(argv[3]);
        double *times = calloc(n, sizeof *times);
        reader_t *reader = calloc(1, sizeof *reader);
        static char given[1 << 15];
        int given_length = 0;
        if (argc == 5) {
            FILE *file = fopen(argv[4], "r");
            if (!file || !fgets(given, sizeof given, file) || !strchr(given, '\n')) {
                fprintf(stderr, "limits: %s holds no request line\n", argv[4]);
                return 1;
            }
            fclose(file);
            given_length = (int)strlen(given);
        }
        reader->fd = agent_connect(argv[2]);
        char line[256];
        for (long i = 0; i < n; i++) {
            int length = given_length ? given_length : agent_request(line, sizeof line, i);
            const char *request = given_length ? given : line;
            double start = seconds();
            if (write(reader->fd, request, length) != length) { perror("limits: write"); return 1; }
            agent_answers(reader, 1);
            times[i] = (seconds() - start) * 1000;
        }
        qsort(times, n, sizeof *times, compare);
        printf("%.4f %.4f\n", times[n / 2], times[n * 99 / 100]);
        return 0;
    }
    if (argc == 6 && strcmp(argv[1], "agent-rate") == 0) {
        if (sodium_init() < 0) return 1;
        long n = atol(argv[3]), connections = atol(argv[4]);
        pthread_t threads[64];
        rate_job_t jobs[64];
        if (connections < 1 || connections > 64) return 64;
        double start = seconds();
        for (long i = 0; i < connections; i++) {
            jobs[i] = (rate_job_t){argv[2], n / connections, atol(argv[5])};
            pthread_create(&threads[i], NULL, agent_rate_thread, &jobs[i]);
        }
        for (long i = 0; i < connections; i++) pthread_join(threads[i], NULL);
        printf("%.0f\n", (n / connections * connections) / (seconds() - start));
        return 0;
    }
    if (argc == 4 && strcmp(argv[1], "durable-write") == 0) {
        long n = atol(argv[3]);
        double *times = calloc(n, sizeof *times);
        char temporary[4096], final[4096], record[256];
        snprintf(temporary, sizeof temporary, "%s/.limits-durable.tmp", argv[2]);
        snprintf(final, sizeof final, "%s/limits-durable", argv[2]);
        int directory = open(argv[2], O_RDONLY | O_DIRECTORY);
        if (directory < 0) { perror("limits: directory"); return 1; }
        for (long i = 0; i < n; i++) {
            int length = snprintf(record, sizeof record, "{\"version\": 2, \"slices\": [[%ld, \"rule\", \"native\", 86400, \"1.5\", \"0\"]]}\n", i);
            double start = seconds();
            int fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
            if (fd < 0 || write(fd, record, length) != length || fsync(fd) != 0 || close(fd) != 0
                || rename(temporary, final) != 0 || fsync(directory) != 0) { perror("limits: durable write"); return 1; }
            times[i] = (seconds() - start) * 1000;
        }
        unlink(final);
        close(directory);
        qsort(times, n, sizeof *times, compare);
        printf("%.4f\n", times[n / 2]);
        return 0;
    }
    fprintf(stderr, "usage: limits sign N | limits spawn N CMD... | limits rss CMD... | limits agent SOCKET N"
                    " | limits agent-rate SOCKET N CONNECTIONS WINDOW | limits durable-write DIR N\n");
    return 64;
}
