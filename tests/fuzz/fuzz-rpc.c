/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the daemon's framing and dispatch: the input is fed to a
 * fresh connection as raw socket bytes (any number of frames, hello or not),
 * and every line the daemon writes back must be a JSON-RPC object. Built as a
 * libFuzzer target with clang -fsanitize=fuzzer, or linked with replay.c to
 * replay the corpus in `make check`.
 */
#include <event2/event.h>
#include <event2/thread.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core.h"
#include "log.h"
#include "rpc-server.h"
#include "session.h"
#include "store.h"
#include "workers.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static struct tbx_core core;
static struct event_base *base;
static struct tbx_server *server;
static char state_dir[] = "/tmp/tbx-fuzz-XXXXXX";

/* Leave nothing behind in /tmp: the database and its WAL files, then the directory. */
static void fuzz_cleanup(void)
{
	static const char *const suffixes[] = { "", "-wal", "-shm" };
	char path[64];

	tbx_store_close(core.store);
	core.store = NULL;
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/twinbox.db%s", state_dir, suffixes[i]);
		unlink(path);
	}
	rmdir(state_dir);
}

static void fuzz_setup(void)
{
	struct tbx_workers *workers;
	char db[64];

	tbx_log_set_level(TBX_LOG_ERROR);
	if (!mkdtemp(state_dir))
		abort();
	snprintf(db, sizeof(db), "%s/twinbox.db", state_dir);
	pthread_mutex_init(&core.engines_lock, NULL);
	if (tbx_store_open(db, &core.store) < 0 || tbx_sessions_new(&core, &core.sessions) < 0)
		abort();
	atexit(fuzz_cleanup);
	if (evthread_use_pthreads() != 0 || !(base = event_base_new()))
		abort();
	workers = tbx_workers_new(base, 2, 1);
	if (!workers || tbx_server_new(base, workers, &core, -1, &server) < 0)
		abort();
}

/* Every reply line must parse as a JSON-RPC 2.0 object. */
static void check_replies(char *buf, size_t *len)
{
	char *start = buf, *nl;

	while ((nl = memchr(start, '\n', *len - (size_t)(start - buf)))) {
		struct json_object *msg, *v;
		*nl = '\0';
		msg = json_tokener_parse(start);
		if (!msg || !json_object_object_get_ex(msg, "jsonrpc", &v) ||
		    strcmp(json_object_get_string(v), "2.0") != 0) {
			fprintf(stderr, "daemon wrote a bad frame: %s\n", start);
			abort();
		}
		json_object_put(msg);
		start = nl + 1;
	}
	*len -= (size_t)(start - buf);
	memmove(buf, start, *len);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static char reply[1 << 20];
	size_t written = 0, reply_len = 0;
	int sv[2], quiet = 0;

	if (!base)
		fuzz_setup();
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0)
		abort();
	tbx_server_conn_for_fd(server, sv[0]);
	/* Drive the loop until the input is in and the daemon has gone quiet. */
	for (int round = 0; round < 20000 && quiet < 50; round++) {
		ssize_t n;
		if (written < size) {
			n = write(sv[1], data + written, size - written);
			if (n > 0)
				written += (size_t)n;
		}
		event_base_loop(base, EVLOOP_NONBLOCK);
		n = read(sv[1], reply + reply_len, sizeof(reply) - 1 - reply_len);
		if (n > 0) {
			reply_len += (size_t)n;
			check_replies(reply, &reply_len);
			quiet = 0;
		} else if (written == size && tbx_server_inflight(server) == 0) {
			quiet++;
		}
		if (reply_len == sizeof(reply) - 1)
			reply_len = 0; /* one enormous line: drop it, keep going */
		usleep(100);
	}
	close(sv[1]);
	for (int i = 0; i < 10; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
	return 0;
}
