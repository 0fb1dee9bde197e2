/* SPDX-License-Identifier: MIT */
/*
 * Robustness of twinbox-sandbox-agent: malformed HTTP, envelopes, JSON and
 * content types over its socket get error replies, and it keeps serving.
 * The agent runs directly (no bubblewrap) on a socket in a temp dir.
 * Usage: test-local-agent PATH/TO/twinbox-sandbox-agent
 */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "envd-envelope.h"

static char dir[64], sock_path[100];
static size_t last_len;
static int failures;

#define CHECK(cond, ...)                                      \
	do {                                                  \
		printf((cond) ? "ok - " : "not ok - ");       \
		if (!(cond))                                  \
			failures++;                           \
		printf(__VA_ARGS__);                          \
		printf("\n");                                 \
	} while (0)

/* Send raw bytes, half-close, and read the whole answer (bounded by 5 s). */
static size_t roundtrip(const void *req, size_t len, char *resp, size_t cap)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	size_t got = 0, off = 0;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memcpy(sun.sun_path, sock_path, strlen(sock_path) + 1);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		if (fd >= 0)
			close(fd);
		resp[0] = '\0';
		return 0;
	}
	while (off < len) {
		ssize_t n = send(fd, (const char *)req + off, len - off, MSG_NOSIGNAL);

		if (n <= 0)
			break;
		off += (size_t)n;
	}
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, 5000) <= 0)
			break;
		n = read(fd, resp + got, cap - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == cap - 1)
			break;
	}
	close(fd);
	resp[got] = '\0';
	last_len = got;
	return got;
}

static int status_of(const char *resp)
{
	int st = 0;

	if (sscanf(resp, "HTTP/1.%*d %d", &st) != 1)
		return 0;
	return st;
}

static const char *body_of(const char *resp)
{
	const char *p = strstr(resp, "\r\n\r\n");

	return p ? p + 4 : "";
}

static size_t http(const char *method, const char *path, const char *ctype, const void *body,
		   size_t blen, char *resp, size_t cap)
{
	char *req = malloc(blen + 1024);
	int n = snprintf(req, 1024,
			 "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
			 "%s%s%sContent-Length: %zu\r\n\r\n",
			 method, path, ctype ? "Content-Type: " : "", ctype ? ctype : "",
			 ctype ? "\r\n" : "", blen);
	size_t r;

	memcpy(req + n, body, blen);
	r = roundtrip(req, (size_t)n + blen, resp, cap);
	free(req);
	return r;
}

static int healthy(void)
{
	char resp[4096];

	http("GET", "/health", NULL, "", 0, resp, sizeof(resp));
	return status_of(resp) == 204;
}

/* Decode a chunked body into out; returns its length. */
static size_t dechunk(const char *body, char *out, size_t cap)
{
	size_t n = 0;

	for (;;) {
		char *end;
		unsigned long len = strtoul(body, &end, 16);

		if (end == body || strncmp(end, "\r\n", 2) != 0 || len == 0)
			break;
		body = end + 2;
		if (n + len > cap)
			break;
		memcpy(out + n, body, len);
		n += len;
		body += len + 2;
	}
	return n;
}

/* Start a command through a real Connect envelope; returns the response text. */
static size_t start(const char *json, uint8_t flags, long declared, char *resp, size_t cap)
{
	size_t n = strlen(json);
	unsigned char *env = malloc(n + 5);
	size_t r;

	tbx_envd_envelope_header(env, flags, declared >= 0 ? (uint32_t)declared : (uint32_t)n);
	memcpy(env + 5, json, n);
	r = http("POST", "/process.Process/Start", "application/connect+json", env, n + 5, resp,
		 cap);
	free(env);
	return r;
}

/* The body bytes of an answer of \p len bytes, chunked or not. */
static size_t payload_of(const char *resp, size_t len, char *out, size_t cap)
{
	const char *b = strstr(resp, "\r\n\r\n");
	size_t n;

	if (!b)
		return 0;
	b += 4;
	if (memmem(resp, (size_t)(b - resp), "Transfer-Encoding: chunked", 26))
		return dechunk(b, out, cap);
	n = len - (size_t)(b - resp);
	n = n < cap ? n : cap;
	memcpy(out, b, n);
	return n;
}

static char payload[1 << 16];
static size_t payload_len;

/* The end-of-stream message of the last streamed answer, or "" when there is none. */
static const char *eos_of(const char *resp, char *out, size_t cap)
{
	struct tbx_envd_reader r;
	const char *msg;
	size_t len;
	uint8_t flags;

	out[0] = '\0';
	payload_len = payload_of(resp, last_len, payload, sizeof(payload));
	tbx_envd_reader_init(&r, 1 << 20);
	tbx_envd_reader_feed(&r, payload, payload_len);
	while (tbx_envd_reader_next(&r, &flags, &msg, &len) == 1)
		if (flags & TBX_ENVD_FLAG_END_STREAM)
			snprintf(out, cap, "%.*s", (int)len, msg);
	tbx_envd_reader_release(&r);
	return out;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(p);
	return 0;
}

int main(int argc, char **argv)
{
	static char resp[1 << 17];
	char home[100], eos[1024];
	pid_t agent;
	int st;

	if (argc < 2) {
		fprintf(stderr, "usage: %s twinbox-sandbox-agent\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(dir, sizeof(dir), "/tmp/tbx-agent-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	snprintf(sock_path, sizeof(sock_path), "%s/agent.sock", dir);
	snprintf(home, sizeof(home), "%s/home", dir);
	mkdir(home, 0755);

	agent = fork();
	if (agent == 0) {
		execl(argv[1], argv[1], "--socket", sock_path, "--home", home, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200 && !healthy(); i++)
		usleep(20000);
	CHECK(healthy(), "agent answers /health with 204");

	http("POST", "/filesystem.Filesystem/Stat", "text/plain", "{}", 2, resp, sizeof(resp));
	CHECK(status_of(resp) == 400 && strstr(body_of(resp), "\"invalid_argument\""),
	      "unary with a wrong content type → 400 invalid_argument");
	http("POST", "/filesystem.Filesystem/Stat", NULL, "{}", 2, resp, sizeof(resp));
	CHECK(status_of(resp) == 400, "unary without a content type → 400");
	http("POST", "/filesystem.Filesystem/Stat", "application/json", "{not json", 9, resp,
	     sizeof(resp));
	CHECK(status_of(resp) == 400 && strstr(resp, "application/json"),
	      "bad JSON → 400 with a JSON error body");
	http("POST", "/filesystem.Filesystem/Stat", "application/json", "[1,2]", 5, resp, sizeof(resp));
	CHECK(status_of(resp) == 400, "JSON array → 400");
	http("POST", "/filesystem.Filesystem/Stat", "application/json", "{\"path\":12}", 11, resp,
	     sizeof(resp));
	CHECK(status_of(resp) == 400, "path of the wrong type → 400");
	http("POST", "/filesystem.Filesystem/Stat", "application/json", "{\"path\":\"a\\u0000b\"}",
	     20, resp, sizeof(resp));
	CHECK(status_of(resp) == 400, "path with a NUL → 400");
	http("POST", "/filesystem.Filesystem/Stat", "application/json", "{} trailing", 11, resp,
	     sizeof(resp));
	CHECK(status_of(resp) == 400, "trailing garbage → 400");
	http("POST", "/filesystem.Filesystem/Stat", "application/json; charset=utf-8",
	     "{\"path\":\"nope\"}", 15, resp, sizeof(resp));
	CHECK(status_of(resp) == 404 && strstr(body_of(resp), "\"not_found\""),
	      "missing path → 404 not_found (charset parameter accepted)");
	http("POST", "/filesystem.Filesystem/WatchDir", "application/json", "{}", 2, resp,
	     sizeof(resp));
	CHECK(status_of(resp) == 501 && strstr(body_of(resp), "unimplemented"),
	      "unknown method → unimplemented");
	http("GET", "/nowhere", NULL, "", 0, resp, sizeof(resp));
	CHECK(status_of(resp) == 404, "unknown route → 404");
	http("DELETE", "/files?path=x", NULL, "", 0, resp, sizeof(resp));
	CHECK(status_of(resp) >= 400, "DELETE refused (%d)", status_of(resp));

	http("POST", "/process.Process/Start", "application/json", "{}", 2, resp, sizeof(resp));
	CHECK(status_of(resp) == 400, "Start as application/json → 400");
	http("POST", "/process.Process/Start", "application/connect+json", "\0\0", 2, resp,
	     sizeof(resp));
	CHECK(status_of(resp) == 200 && strstr(eos_of(resp, eos, sizeof(eos)), "invalid_argument"),
	      "short envelope → end-of-stream invalid_argument (%s)", eos);
	start("{\"process\":{\"cmd\":\"/bin/true\"}}", 0, 5, resp, sizeof(resp));
	CHECK(strstr(eos_of(resp, eos, sizeof(eos)), "invalid_argument"),
	      "length mismatch → end-of-stream error");
	start("{\"process\":{\"cmd\":\"/bin/true\"}}", 1, -1, resp, sizeof(resp));
	CHECK(strstr(eos_of(resp, eos, sizeof(eos)), "invalid_argument"),
	      "compressed flag → end-of-stream error");
	start("{\"process\":", 0, -1, resp, sizeof(resp));
	CHECK(strstr(eos_of(resp, eos, sizeof(eos)), "invalid_argument"),
	      "truncated JSON → end-of-stream error");
	start("{\"process\":{}}", 0, -1, resp, sizeof(resp));
	CHECK(strstr(eos_of(resp, eos, sizeof(eos)), "process.cmd is required"), "no cmd → error");
	start("{\"process\":{\"cmd\":\"/bin/true\",\"args\":[1]}}", 0, -1, resp, sizeof(resp));
	CHECK(strstr(eos_of(resp, eos, sizeof(eos)), "invalid_argument"), "bad args → error");
	start("{\"process\":{\"cmd\":\"/bin/true\",\"envs\":{\"A\":1}}}", 0, -1, resp, sizeof(resp));
	CHECK(strstr(eos_of(resp, eos, sizeof(eos)), "invalid_argument"), "bad envs → error");
	start("{\"process\":{\"cmd\":\"/no/such/binary\"}}", 0, -1, resp, sizeof(resp));
	CHECK(strstr(eos_of(resp, eos, sizeof(eos)), "not_found"), "missing binary → not_found");
	start("{\"process\":{\"cmd\":\"/bin/true\",\"cwd\":\"/no/such/dir\"}}", 0, -1, resp,
	      sizeof(resp));
	CHECK(strstr(eos_of(resp, eos, sizeof(eos)), "/no/such/dir"), "bad cwd → error naming it");
	start("{\"process\":{\"cmd\":\"/bin/sh\",\"args\":[\"-c\",\"echo hello; exit 4\"]}}", 0, -1,
	      resp, sizeof(resp));
	CHECK(strcmp(eos_of(resp, eos, sizeof(eos)), "{}") == 0 &&
		      strstr(resp, "application/connect+json") &&
		      memmem(payload, payload_len, "{\"event\":{\"start\":{\"pid\":", 25) &&
		      memmem(payload, payload_len, "aGVsbG8K", 8) &&
		      memmem(payload, payload_len, "\"exitCode\":4", 12),
	      "a valid Start streams start, data, end and {}");
	{
		/* Keep-Alive not honoured for envelopes: a 2 s command with a 300 ms deadline. */
		struct timespec t0, t1;
		char req[512];
		const char *json = "{\"process\":{\"cmd\":\"/bin/sleep\",\"args\":[\"2\"]}}";
		size_t jn = strlen(json);
		int n = snprintf(req, sizeof(req),
				 "POST /process.Process/Start HTTP/1.1\r\nHost: x\r\nConnection: "
				 "close\r\nContent-Type: application/connect+json\r\n"
				 "Connect-Timeout-Ms: 300\r\nContent-Length: %zu\r\n\r\n",
				 jn + 5);

		tbx_envd_envelope_header((unsigned char *)req + n, 0, (uint32_t)jn);
		memcpy(req + n + 5, json, jn);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		roundtrip(req, (size_t)n + 5 + jn, resp, sizeof(resp));
		clock_gettime(CLOCK_MONOTONIC, &t1);
		CHECK(strstr(eos_of(resp, eos, sizeof(eos)), "deadline_exceeded") &&
			      t1.tv_sec - t0.tv_sec < 2,
		      "Connect-Timeout-Ms kills the process: %s", eos);
	}

	http("GET", "/files", NULL, "", 0, resp, sizeof(resp));
	CHECK(status_of(resp) == 400 && strstr(body_of(resp), "\"code\":400"),
	      "download without path → 400");
	http("GET", "/files?path=/", NULL, "", 0, resp, sizeof(resp));
	CHECK(status_of(resp) == 400, "download of a directory → 400");
	http("GET", "/files?path=nope.txt", NULL, "", 0, resp, sizeof(resp));
	CHECK(status_of(resp) == 404 && strstr(body_of(resp), "does not exist"),
	      "download of a missing file → 404");
	http("POST", "/files?path=up.txt", "multipart/form-data; boundary=x", "--x--", 5, resp,
	     sizeof(resp));
	CHECK(status_of(resp) == 400, "multipart upload refused with 400");
	http("POST", "/files?path=sub/up.txt", "application/octet-stream", "data", 4, resp,
	     sizeof(resp));
	CHECK(status_of(resp) == 200 && strstr(body_of(resp), "/home/sub/up.txt"),
	      "octet-stream upload, relative path under home");
	http("GET", "/files?path=sub/up.txt", NULL, "", 0, resp, sizeof(resp));
	CHECK(status_of(resp) == 200 && strcmp(body_of(resp), "data") == 0, "download it back");

	{
		/* Raw garbage, oversized headers, and random bodies on every route. */
		static char big[200000];
		const char *routes[] = { "/process.Process/Start", "/process.Process/SendSignal",
					 "/filesystem.Filesystem/ListDir", "/filesystem.Filesystem/Move",
					 "/filesystem.Filesystem/Remove", "/files?path=fz", "/health" };
		const char *types[] = { "application/json", "application/connect+json",
					"application/octet-stream", "text/html" };
		unsigned seed = 12345;

		roundtrip("HELLO THERE\r\n\r\n", 15, resp, sizeof(resp));
		roundtrip("GET / HTTP/1.1\r\nContent-Length: -5\r\n\r\n", 39, resp, sizeof(resp));
		roundtrip("POST /files?path=x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
			  62, resp, sizeof(resp));
		memset(big, 'a', sizeof(big) - 1);
		memcpy(big, "GET /health HTTP/1.1\r\nX-Big: ", 29);
		roundtrip(big, sizeof(big) - 1, resp, sizeof(resp));
		CHECK(healthy(), "still serving after malformed HTTP");
		for (int i = 0; i < 300; i++) {
			char body[256];
			size_t n = (size_t)(rand_r(&seed) % sizeof(body));

			for (size_t k = 0; k < n; k++)
				body[k] = (char)rand_r(&seed);
			if (i % 3 == 0 && n > 5)
				body[0] = 0; /* plausible envelope flags */
			http("POST", routes[rand_r(&seed) % 7], types[rand_r(&seed) % 4], body, n, resp,
			     sizeof(resp));
		}
		CHECK(healthy(), "still serving after 300 random requests");
	}
	http("POST", "/process.Process/SendSignal", "application/json",
	     "{\"process\":{\"pid\":999999},\"signal\":\"SIGNAL_SIGKILL\"}", 52, resp, sizeof(resp));
	CHECK(status_of(resp) == 404, "SendSignal to an unknown pid → 404 not_found");
	CHECK(waitpid(agent, &st, WNOHANG) == 0, "the agent never crashed");

	kill(agent, SIGTERM);
	waitpid(agent, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "clean exit on SIGTERM");
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	printf("# %d failure(s)\n", failures);
	return failures ? 1 : 0;
}
