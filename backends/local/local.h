/* SPDX-License-Identifier: MIT */
/*
 * The local engine: bubblewrap sandboxes on this machine, each running
 * twinbox-sandbox-agent, driven through the shared envd client.
 */
#ifndef TBX_LOCAL_H
#define TBX_LOCAL_H

#include <json-c/json.h>
#include <limits.h>
#include <sys/un.h>
#include <twinbox/backend.h>

#include "envd-client.h"

#define LOCAL_ID_LEN 20
#define LOCAL_ID_MAX 64
/* Where things live inside every sandbox. */
#define LOCAL_HOME "/home/user"
#define LOCAL_WORKDIR "/home/user/project"
#define LOCAL_RUN "/run/twinbox"
#define LOCAL_AGENT_IN "/run/twinbox-agent/agent"
/* The egress gateway's socket directory, bound read-only, and its ports on the sandbox's loopback. */
#define LOCAL_GATEWAY_IN "/run/twinbox-gateway"
#define LOCAL_GATEWAY_CONNECT "connect.sock"
#define LOCAL_SOCKS_PORT "1080"
#define LOCAL_CONNECT_PORT "3128"
/* How long a start may take before it is called failed. */
#define LOCAL_START_TIMEOUT_MS 10000

struct tbx_local {
	const struct tbx_host_api *host;
	char *sandboxes; /* <data_root>/sandboxes */
	char *bwrap;     /* bubblewrap binary */
	char *agent;     /* twinbox-sandbox-agent on the host */
};

/* One sandbox's paths on the host. */
struct local_sbx {
	char id[LOCAL_ID_MAX + 1];
	char dir[PATH_MAX];
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

/* local-paths.c */
int local_id_valid(const char *id);
int local_id_new(char out[LOCAL_ID_LEN + 1]);
/* Fill \p s for \p id; error_set and a status when id or paths are bad. */
int local_sbx_init(struct tbx_local *l, struct tbx_call *call, const char *id,
		   struct local_sbx *s);
/* "<dir>/<name>" into \p out (PATH_MAX). */
void local_sbx_path(const struct local_sbx *s, const char *name, char *out);
/* The sandbox directory exists. */
int local_sbx_exists(const struct local_sbx *s);
char *local_find_agent(struct tbx_call *call, const struct tbx_host_api *host);
char *local_find_bwrap(struct tbx_call *call, const struct tbx_host_api *host);
/* mkdir -p with \p mode; 0 or -1 with errno. */
int local_mkdirs(const char *path, mode_t mode);
/* rm -rf that copes with read-only directories; 0 or -1 with errno. */
int local_rmtree(const char *path);

/* local-meta.c: meta.json, written atomically */
struct json_object *local_meta_load(const struct local_sbx *s);
int local_meta_save(const struct local_sbx *s, struct json_object *meta);
int local_meta_paused(struct json_object *meta);
void local_meta_set_state(struct json_object *meta, int paused);
void local_meta_set_timeout(struct json_object *meta, uint32_t timeout_s);
/* Flock the sandbox's lock file; the fd, or -1 with errno. */
int local_sbx_lock(const struct local_sbx *s);
void local_sbx_unlock(int fd);

/* local-egress.c: egress_proxy_url as a gateway on a Unix socket */
struct local_egress {
	char userinfo[512]; /* "USER:PASS" as the URL has it (percent-encoded), or "" */
	char dir[PATH_MAX]; /* host directory of the gateway's sockets */
	char socks[64];     /* the SOCKS5 socket's name in it; CONNECT's is LOCAL_GATEWAY_CONNECT */
};
/*
 * Split socks5h://[USER:PASS@]localhost/DIR/NAME: 1 when url has that form,
 * 0 when it is some other proxy URL, -1 when it has the form but is unsafe.
 */
int local_egress_parse(const char *url, struct local_egress *out);
/* At create: refuse a bad Unix form (TBX_EINVAL) and make its directory. */
int local_egress_check(struct tbx_local *l, struct tbx_call *call, const char *url);

/* local-spawn.c: starting and stopping the bubblewrap process */
/* With the lock held: (re)start and wait until the agent answers. */
int local_sandbox_start(struct tbx_local *l, struct tbx_call *call, const struct local_sbx *s,
			struct json_object *meta);
/* With the lock held: kill every process of the sandbox; idempotent. */
void local_sandbox_stop(struct tbx_local *l, const struct local_sbx *s);
/* The sandbox's bubblewrap process is alive. */
int local_sandbox_alive(const struct local_sbx *s);

/* local-lifecycle.c */
int local_sandbox_create(void *inst, struct tbx_call *call, const struct tbx_sandbox_spec *spec,
			 struct tbx_sandbox_info *out);
int local_sandbox_connect(void *inst, struct tbx_call *call, const char *id, uint32_t timeout_s,
			  struct tbx_sandbox_info *out);
int local_sandbox_set_timeout(void *inst, struct tbx_call *call, const char *id,
			      uint32_t timeout_s);
int local_sandbox_pause(void *inst, struct tbx_call *call, const char *id);
int local_sandbox_kill(void *inst, struct tbx_call *call, const char *id);
int local_sandbox_list(void *inst, struct tbx_call *call, const char *const *labels,
		       struct tbx_sandbox_info **out, size_t *n_out);
/*
 * An envd client for a running sandbox, restarting it first if its
 * process died while its meta says running (e.g. after a reboot).
 */
int local_sandbox_client(struct tbx_local *l, struct tbx_call *call, const char *id,
			 struct tbx_envd_client **out);

/* local-ops.c: exec and files through the agent */
int local_exec(void *inst, struct tbx_call *call, const char *id,
	       const struct tbx_exec_request *request, tbx_exec_output_cb on_output, void *payload,
	       struct tbx_exec_result *out);
int local_file_read(void *inst, struct tbx_call *call, const char *id, const char *path,
		    char **data_out, size_t *len_out);
int local_file_write(void *inst, struct tbx_call *call, const char *id, const char *path,
		     const char *data, size_t len);
int local_file_stat(void *inst, struct tbx_call *call, const char *id, const char *path,
		    struct tbx_file_info *out);
int local_file_list(void *inst, struct tbx_call *call, const char *id, const char *path,
		    uint32_t depth, struct tbx_file_info **out, size_t *n_out);
int local_file_mkdir(void *inst, struct tbx_call *call, const char *id, const char *path);
int local_file_remove(void *inst, struct tbx_call *call, const char *id, const char *path);
int local_file_rename(void *inst, struct tbx_call *call, const char *id, const char *from,
		      const char *to);

#endif
