/* A random bot for mancala-arena (protocol v1) in C99, standard library only.
 * One JSON object per line on stdin; one per line on stdout, flushed.
 * Lines may be long: getline reads any length. Replace choose().
 * A real bot should use a JSON parser (cJSON, jansson): this template only
 * scans for the fields it needs (the option strings have no escapes). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The string value of "key" in line, copied into out (size n); 0 if absent. */
static int field(const char *line, const char *key, char *out, size_t n) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\"", key);
    const char *p = strstr(line, pat);
    if (!p) return 0;
    p += strlen(pat);
    while (*p == ' ' || *p == ':') p++;
    if (*p != '"') return 0;
    size_t i = 0;
    for (p++; *p && *p != '"' && i + 1 < n; p++) out[i++] = *p;
    out[i] = '\0';
    return 1;
}

/* Picks one legal option at random; writes it into out. */
static void choose(const char *line, char *out, size_t n) {
    const char *p = strstr(line, "\"legal\"");
    p = p ? strchr(p, '[') : NULL;
    const char *opts[512];
    size_t lens[512], k = 0;
    while (p && *p && *p != ']' && k < 512) {
        const char *q = strchr(p, '"');
        if (!q) break;
        const char *e = strchr(q + 1, '"');
        if (!e) break;
        opts[k] = q + 1;
        lens[k++] = (size_t)(e - q - 1);
        p = e + 1;
        while (*p == ' ' || *p == ',') p++;
    }
    out[0] = '\0';
    if (k == 0) return;
    size_t r = (size_t)rand() % k, len = lens[r] < n - 1 ? lens[r] : n - 1;
    memcpy(out, opts[r], len);
    out[len] = '\0';
}

int main(void) {
    char *line = NULL, type[32], seed[32], seat[8], option[64];
    size_t cap = 0;
    while (getline(&line, &cap, stdin) > 0) {
        if (!field(line, "type", type, sizeof type)) continue;
        if (strcmp(type, "hello") == 0) {
            printf("{\"type\":\"hello\",\"name\":\"template-c\",\"version\":\"1.0\"}\n");
        } else if (strcmp(type, "game_start") == 0) {
            /* Seed from the referee's seed: the same seed, the same game. */
            if (field(line, "seed", seed, sizeof seed)) {
                char *s = strstr(line, "\"seat\"");
                snprintf(seat, sizeof seat, "%d", s ? atoi(s + 7) : 0);
                srand((unsigned)(strtoull(seed, NULL, 10) ^ (strtoull(seat, NULL, 10) * 2654435761u)));
            }
            continue;
        } else if (strcmp(type, "request") == 0) {
            choose(line, option, sizeof option);
            printf("{\"type\":\"reply\",\"option\":\"%s\"}\n", option);
        } else if (strcmp(type, "quit") == 0) {
            break;
        } else {
            continue; /* game_end and unknown types: nothing to answer */
        }
        fflush(stdout);
    }
    free(line);
    return 0;
}
