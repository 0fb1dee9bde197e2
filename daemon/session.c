/* SPDX-License-Identifier: MIT */
/* Sessions: the store's rows plus the one-sandbox-per-session guarantee. */
#define _GNU_SOURCE
#include "session.h"

#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"
#include "egress.h"
#include "engine.h"
#include "error.h"
#include "git-repo.h"
#include "log.h"
#include "store.h"
#include "sync.h"
#include "tools/tools.h"
#include "twin-ops.h"
#include "twin-service.h"

#define TBX_LOG_CATEGORY "session"

/* E2B's idle window (DESIGN §4); engines without billing treat it as advice. */
#define SANDBOX_TIMEOUT_S (20 * 60)
/* How often tool use may push last_used_at to the store. */
#define TOUCH_INTERVAL_MS (60 * 1000)
/* How often sync progress (objects indexed...) may be reported. */
#define SYNC_PROGRESS_MS 100

struct tbx_session {
	atomic_int refs;
	pthread_mutex_t lock; /* guards row and the sandbox fields; held across create */
	struct tbx_sessions *owner;
	struct tbx_session_row row;
	struct tbx_engine *engine;
	int sandbox_ready; /* created or connected by this daemon */
	int64_t touched_at;
	/* Git sync: one at a time per session. Taken before lock, never inside it. */
	pthread_mutex_t sync_lock;
	struct tbx_sync_status sync; /* guarded by lock */
	char *notice_pending;        /* told with the next tool result; guarded by lock */
	struct json_object *egress;  /* the sandbox's egress as shown; NULL until known; guarded by lock */
	char *egress_notice;         /* like notice_pending, for egress; guarded by lock */
};

struct tbx_sessions {
	struct tbx_core *core;
	pthread_mutex_t lock;
	struct tbx_session **items;
	size_t n;
};

int tbx_sessions_new(struct tbx_core *core, struct tbx_sessions **out)
{
	struct tbx_sessions *s = calloc(1, sizeof(*s));

	if (!s)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	s->core = core;
	pthread_mutex_init(&s->lock, NULL);
	*out = s;
	return 0;
}

void tbx_session_unref(struct tbx_session *session)
{
	if (!session || atomic_fetch_sub(&session->refs, 1) != 1)
		return;
	tbx_session_row_clear(&session->row);
	tbx_sync_status_clear(&session->sync);
	free(session->notice_pending);
	free(session->egress_notice);
	json_object_put(session->egress);
	pthread_mutex_destroy(&session->sync_lock);
	pthread_mutex_destroy(&session->lock);
	free(session);
}

void tbx_sessions_free(struct tbx_sessions *sessions)
{
	if (!sessions)
		return;
	for (size_t i = 0; i < sessions->n; i++)
		tbx_session_unref(sessions->items[i]);
	free(sessions->items);
	pthread_mutex_destroy(&sessions->lock);
	free(sessions);
}

/* Adopts row. Called with sessions->lock held. */
static struct tbx_session *sessions_add_locked(struct tbx_sessions *sessions,
					       struct tbx_session_row *row)
{
	struct tbx_session **grown, *s = calloc(1, sizeof(*s));

	grown = realloc(sessions->items, (sessions->n + 1) * sizeof(*grown));
	if (!s || !grown) {
		free(s);
		if (grown)
			sessions->items = grown;
		tbx_error_set(TBX_ENOMEM, "out of memory");
		return NULL;
	}
	sessions->items = grown;
	atomic_init(&s->refs, 1);
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->sync_lock, NULL);
	s->owner = sessions;
	s->row = *row;
	memset(row, 0, sizeof(*row));
	sessions->items[sessions->n++] = s;
	return s;
}

int tbx_session_get(struct tbx_sessions *sessions, const char *id, struct tbx_session **out)
{
	struct tbx_session_row row = { 0 };
	struct tbx_session *s = NULL;
	int rc = 0;

	pthread_mutex_lock(&sessions->lock);
	for (size_t i = 0; i < sessions->n; i++) {
		if (strcmp(sessions->items[i]->row.id, id) == 0) {
			s = sessions->items[i];
			break;
		}
	}
	if (!s) {
		rc = tbx_store_session_get(sessions->core->store, id, &row);
		if (rc == TBX_ENOENT)
			rc = tbx_error_set(TBX_ENOENT,
					   "no session '%s'; `twinbox session list` shows the sessions",
					   id);
		if (rc == 0 && !(s = sessions_add_locked(sessions, &row)))
			rc = TBX_ENOMEM;
		tbx_session_row_clear(&row);
	}
	if (s)
		atomic_fetch_add(&s->refs, 1);
	pthread_mutex_unlock(&sessions->lock);
	*out = s;
	return rc;
}

static int random_id(char *out, size_t len)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char bytes[64];

	if (len > sizeof(bytes) || getrandom(bytes, len, 0) != (ssize_t)len)
		return tbx_error_set(TBX_EIO, "cannot read random bytes: %s", strerror(errno));
	for (size_t i = 0; i < len; i++)
		out[i] = alphabet[bytes[i] % 36];
	out[len] = '\0';
	return 0;
}

/*
 * Give a session in a git repository its branch number N (opencode/N). Done
 * at open so the user sees N at once, and again for a replacement sandbox:
 * one N per sandbox. Sync still works without one (it retries), so a
 * failure is logged, not returned.
 */
static void session_branch_allocate(struct tbx_core *core, struct tbx_session_row *row)
{
	int64_t n = 0;

	if (tbx_sync_branch_allocate(core->store, row->repo_root, row->id, &n) < 0) {
		tbx_log_warn("session %s: no branch number for %s: %s", row->id, row->repo_root,
			     tbx_error_message());
		return;
	}
	row->branch_number = n;
	tbx_log_info("session %s: its work syncs to opencode/%lld in %s", row->id, (long long)n,
		     row->repo_root);
}

/* The git worktree root above dir (a .git directory or file), or NULL. */
static char *find_repo_root(const char *dir)
{
	char path[PATH_MAX], probe[PATH_MAX + 8];
	struct stat st;

	if (!realpath(dir, path))
		return NULL;
	for (;;) {
		snprintf(probe, sizeof(probe), "%s/.git", path);
		if (lstat(probe, &st) == 0)
			return strdup(path);
		char *slash = strrchr(path, '/');
		if (!slash || slash == path)
			return NULL;
		*slash = '\0';
	}
}

int tbx_session_open(struct tbx_sessions *sessions, const struct tbx_session_open_args *args,
		     struct json_object **out)
{
	struct tbx_core *core = sessions->core;
	struct tbx_session_row row = { 0 };
	struct tbx_session *s;
	char id[32] = "ses_", real[PATH_MAX];
	struct stat st;
	int rc;

	if (!args->project_dir || args->project_dir[0] != '/')
		return tbx_error_set(TBX_EINVAL, "the project directory must be an absolute path");
	if (!realpath(args->project_dir, real) || stat(real, &st) != 0)
		return tbx_error_set(TBX_ENOENT, "project directory %s does not exist",
				     args->project_dir);
	if (!S_ISDIR(st.st_mode))
		return tbx_error_set(TBX_ENOTDIR, "project directory %s is not a directory",
				     args->project_dir);
	row.engine = strdup(args->engine ? args->engine : tbx_core_default_engine(core));
	if (!tbx_registry_find(&core->registry, TBX_PLUGIN_BACKEND, row.engine)) {
		rc = tbx_error_set(TBX_ENOENT,
				   "no engine named '%s' is loaded; `twinbox modules` lists the engines",
				   row.engine);
		goto out;
	}
	row.frontend = strdup(args->frontend ? args->frontend : "cli");
	if (args->key) {
		struct tbx_session_row found = { 0 };
		rc = tbx_store_session_find(core->store, row.frontend, args->key, &found);
		if (rc == 0) {
			rc = tbx_session_get(sessions, found.id, &s);
			tbx_session_row_clear(&found);
			if (rc < 0)
				goto out;
			pthread_mutex_lock(&s->lock);
			if (strcmp(s->row.state, TBX_SESSION_CLOSED) == 0 &&
			    tbx_store_session_set_state(core->store, s->row.id, TBX_SESSION_OPEN) == 0) {
				free(s->row.state);
				s->row.state = strdup(TBX_SESSION_OPEN);
			}
			pthread_mutex_unlock(&s->lock);
			goto reply;
		}
		if (rc != TBX_ENOENT)
			goto out;
	}
	if ((rc = random_id(id + 4, 20)) < 0)
		goto out;
	row.id = strdup(id);
	row.external_key = strdup(args->key ? args->key : id);
	row.project_dir = strdup(real);
	row.repo_root = find_repo_root(real);
	row.no_twin = args->no_twin;
	row.state = strdup(TBX_SESSION_OPEN);
	row.created_at = row.updated_at = row.last_used_at = tbx_now_ms();
	if ((rc = tbx_store_session_insert(core->store, &row)) < 0)
		goto out;
	if (row.repo_root)
		session_branch_allocate(core, &row);
	tbx_log_info("opened session %s on %s (engine %s)", row.id, row.project_dir, row.engine);
	pthread_mutex_lock(&sessions->lock);
	s = sessions_add_locked(sessions, &row);
	if (s)
		atomic_fetch_add(&s->refs, 1);
	pthread_mutex_unlock(&sessions->lock);
	if (!s) {
		rc = TBX_ENOMEM;
		goto out;
	}
reply:
	rc = tbx_session_to_json(s, out);
	tbx_session_unref(s);
out:
	tbx_session_row_clear(&row);
	return rc;
}

static void json_add_string(struct json_object *o, const char *key, const char *v)
{
	json_object_object_add(o, key, v ? json_object_new_string(v) : NULL);
}

static struct json_object *row_to_json(const struct tbx_session_row *r)
{
	struct json_object *o = json_object_new_object();

	json_add_string(o, "id", r->id);
	json_add_string(o, "frontend", r->frontend);
	json_add_string(o, "key", r->external_key);
	json_add_string(o, "project_dir", r->project_dir);
	json_add_string(o, "repo_root", r->repo_root);
	json_add_string(o, "engine", r->engine);
	json_add_string(o, "sandbox_id", r->sandbox_id);
	json_add_string(o, "workdir", r->workdir);
	json_add_string(o, "twin_id", r->twin_id);
	json_object_object_add(o, "branch_number",
			       r->branch_number ? json_object_new_int64(r->branch_number) : NULL);
	json_object_object_add(o, "twin", json_object_new_boolean(!r->no_twin));
	json_add_string(o, "state", r->state);
	json_object_object_add(o, "created_at", json_object_new_int64(r->created_at));
	json_object_object_add(o, "last_used_at", json_object_new_int64(r->last_used_at));
	return o;
}

/*
 * The egress as this daemon last set it up, or, before that, what the row
 * says: a session's twin outlives daemons, the canary's verdict does not.
 */
static struct json_object *session_egress_json(struct tbx_session *s)
{
	struct json_object *o;

	if (s->egress)
		return json_object_get(s->egress);
	o = json_object_new_object();
	json_object_object_add(o, "twin_id",
			       s->row.twin_id ? json_object_new_string(s->row.twin_id) : NULL);
	json_object_object_add(o, "mode", json_object_new_string(
		s->row.no_twin ? "off" : s->row.twin_id ? "gateway" : s->row.sandbox_id ? "none"
										 : "pending"));
	json_object_object_add(o, "canary", NULL);
	return o;
}

int tbx_session_to_json(struct tbx_session *session, struct json_object **out)
{
	pthread_mutex_lock(&session->lock);
	*out = row_to_json(&session->row);
	json_object_object_add(*out, "sync", tbx_sync_status_json(&session->sync,
								  session->row.repo_root,
								  session->row.branch_number));
	json_object_object_add(*out, "egress", session_egress_json(session));
	pthread_mutex_unlock(&session->lock);
	return 0;
}

int tbx_sessions_list_json(struct tbx_sessions *sessions, struct json_object **out)
{
	struct tbx_session_row *rows;
	struct json_object *arr;
	size_t n;
	int rc;

	/* The store is the truth; in-memory sessions write through to it. */
	if ((rc = tbx_store_session_list(sessions->core->store, &rows, &n)) < 0)
		return rc;
	arr = json_object_new_array();
	for (size_t i = 0; i < n; i++)
		json_object_array_add(arr, row_to_json(&rows[i]));
	tbx_session_rows_free(rows, n);
	*out = arr;
	return 0;
}

size_t tbx_sessions_count(struct tbx_sessions *sessions)
{
	struct tbx_session_row *rows;
	size_t n;

	if (tbx_store_session_list(sessions->core->store, &rows, &n) < 0)
		return 0;
	tbx_session_rows_free(rows, n);
	return n;
}

static int session_check_live(struct tbx_session *s)
{
	if (strcmp(s->row.state, TBX_SESSION_DELETED) == 0)
		return tbx_error_set(TBX_ENOENT,
				     "session %s was deleted; open a new one with `twinbox session open`",
				     s->row.id);
	return 0;
}

static int set_row_string(char **field, const char *value)
{
	char *copy = value ? strdup(value) : NULL;

	if (value && !copy)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	free(*field);
	*field = copy;
	return 0;
}

static void session_event(struct tbx_session *s, const char *kind, struct json_object *data)
{
	tbx_store_event_append(s->owner->core->store, s->row.id, kind,
			       data ? json_object_to_json_string_ext(data, JSON_C_TO_STRING_PLAIN)
				    : NULL);
	json_object_put(data);
}

/* Set the sync status, and queue its notice for the next tool result. Called with s->lock held. */
static void session_sync_status(struct tbx_session *s, const char *state, const char *notice)
{
	tbx_sync_status_set(&s->sync, state, notice);
	if (notice) {
		free(s->notice_pending);
		s->notice_pending = strdup(notice);
	}
}

/*
 * Session start (DESIGN §6): local HEAD becomes branch opencode in the new
 * sandbox. Part of the once-only creation, so racing first calls adopt
 * exactly once and all of them see the commit. A failure here never fails
 * the call that made the sandbox: the sandbox works without it, and the
 * sync status and the next tool result say what happened. Not cancellable:
 * a half-adopted sandbox would be worse than a slow first call. Called with
 * s->lock held.
 */
static void session_adopt_locked(struct tbx_session *s, int replacing)
{
	struct tbx_git_adopt_result res;
	struct tbx_sync_sandbox port;
	struct json_object *ev = json_object_new_object();
	char *text = NULL;
	int rc;

	if (replacing || s->row.branch_number == 0) {
		int64_t before = s->row.branch_number;
		session_branch_allocate(s->owner->core, &s->row);
		if (before && s->row.branch_number != before)
			tbx_log_info("session %s: a new sandbox, so a new branch: opencode/%lld",
				     s->row.id, (long long)s->row.branch_number);
	}
	tbx_sync_sandbox_init(&port, s->engine, s->row.sandbox_id, s->row.workdir, s->row.id,
			      NULL);
	rc = tbx_git_sync_adopt(s->row.repo_root, &port.port, NULL, &res);
	if (rc == 0) {
		int empty = res.head_kind == TBX_GIT_HEAD_UNBORN;
		json_object_object_add(ev, "commit", empty ? NULL
						    : json_object_new_string(git_oid_tostr_s(&res.oid)));
		json_object_object_add(ev, "branch", json_object_new_string(res.head_name));
		json_object_object_add(ev, "bytes", json_object_new_int64((int64_t)res.bytes));
		json_object_object_add(ev, "incremental", json_object_new_boolean(res.incremental));
		json_object_object_add(ev, "dirty", json_object_new_int64((int64_t)res.dirty));
		tbx_log_info("session %s: the sandbox opens on %s%s%s (%llu bytes sent)%s", s->row.id,
			     empty ? "an empty repository" : git_oid_tostr_s(&res.oid),
			     res.head_name[0] ? ", branch " : "", res.head_name,
			     (unsigned long long)res.bytes, res.dirty ? "; the worktree is dirty" : "");
		session_sync_status(s, empty ? "empty" : "adopted", res.notice);
		session_event(s, "git.adopted", ev);
	} else {
		const char *state = rc == TBX_ENOENT || rc == TBX_ENOTSUP ? "off" : "failed";
		if (asprintf(&text, "%s%s%s", rc == TBX_ENOENT ? "git sync is off: " : "",
			     tbx_error_message(),
			     strcmp(state, "failed") == 0
				     ? "; the sandbox works, but it does not hold your commit" : "") < 0)
			text = NULL;
		tbx_log_warn("session %s: cannot put local HEAD in the sandbox: %s", s->row.id,
			     tbx_error_message());
		json_object_object_add(ev, "message", json_object_new_string(tbx_error_message()));
		session_sync_status(s, state, text ? text : tbx_error_message());
		session_event(s, "git.adopt_failed", ev);
		tbx_error_clear();
	}
	free(text);
	tbx_git_adopt_result_clear(&res);
}

/*
 * The session's twin and egress for a new sandbox. A twin made here is
 * recorded at once, so a crash before the sandbox exists still leaves it
 * findable (and deletable with the session). Called with s->lock held.
 */
static int session_egress_prepare(struct tbx_session *s, struct tbx_egress *e)
{
	struct tbx_core *core = s->owner->core;
	int rc = tbx_egress_prepare(core, tbx_engine_name(s->engine), &s->row, e);

	if (rc == 0 && e->twin_made &&
	    (tbx_store_session_set_twin(core->store, s->row.id, e->twin_id) < 0 ||
	     set_row_string(&s->row.twin_id, e->twin_id) < 0))
		rc = tbx_error_prefix("cannot record twin %s of session %s", e->twin_id, s->row.id);
	if (rc < 0) {
		tbx_egress_abandon(core, e);
		tbx_egress_clear(e);
	}
	return rc;
}

/* The sandbox never came: a twin made for it goes too. Called with s->lock held. */
static void session_egress_abandon(struct tbx_session *s, struct tbx_egress *e)
{
	struct tbx_core *core = s->owner->core;
	int status = tbx_error_status();
	char *msg = e->twin_made ? strdup(tbx_error_message()) : NULL;

	if (!e->twin_made)
		return;
	tbx_egress_abandon(core, e);
	if (tbx_store_session_set_twin(core->store, s->row.id, NULL) == 0)
		set_row_string(&s->row.twin_id, NULL);
	/* The caller reports why the sandbox failed, not what cleaning up said. */
	tbx_error_set(status, "%s", msg ? msg : "cannot create a sandbox");
	free(msg);
}

/*
 * Show, log and tell what the sandbox's egress came to: an event, a log
 * line, the session's "egress", and a notice on the next tool result when
 * something is wrong. Called with s->lock held.
 */
static void session_egress_record(struct tbx_session *s, const struct tbx_egress *e,
				  const char *how)
{
	struct json_object *shown = tbx_egress_json(e);
	char *notice = tbx_egress_notice(e);
	const char *kind = e->mode == TBX_EGRESS_GATEWAY ? "egress.wired"
			   : e->mode == TBX_EGRESS_OFF   ? "egress.off"
							 : "egress.unavailable";

	if (e->mode == TBX_EGRESS_GATEWAY)
		tbx_log_info("session %s: sandbox %s: egress through twin %s (%s), canary %s",
			     s->row.id, how, e->twin_id, e->environment,
			     e->canary ? e->canary : "not run");
	else if (e->mode == TBX_EGRESS_NONE)
		tbx_log_write(e->unexpected ? TBX_LOG_WARN : TBX_LOG_INFO, TBX_LOG_CATEGORY,
			      "session %s: sandbox %s without a twin: %s", s->row.id, how,
			      e->reason ? e->reason : "?");
	json_object_put(s->egress);
	s->egress = json_object_get(shown);
	free(s->egress_notice);
	s->egress_notice = notice;
	session_event(s, kind, shown);
	tbx_error_clear();
}

/*
 * A sandbox this daemon did not make (a restart) or that was paused: put the
 * CA back (a local sandbox's /tmp does not survive a pause) and re-run the
 * canary. Called with s->lock held.
 */
static void session_egress_resume(struct tbx_session *s, const atomic_int *cancel)
{
	struct tbx_egress e;

	if (tbx_egress_resume(s->owner->core, tbx_engine_name(s->engine), &s->row, &e) < 0) {
		tbx_error_clear();
		return;
	}
	tbx_egress_install(&e, s->engine, cancel, s->row.sandbox_id);
	session_egress_record(s, &e, "resumed");
	tbx_egress_clear(&e);
}

/* Create a sandbox for s; replacing says one was lost. Called with s->lock held. */
static int session_create_sandbox(struct tbx_session *s, const atomic_int *cancel, int replacing)
{
	struct tbx_core *core = s->owner->core;
	struct tbx_sandbox_spec spec = TBX_SANDBOX_SPEC_INIT;
	struct tbx_sandbox_info info;
	char session_label[64], frontend_label[96];
	const char *labels[] = { "twinbox=1", session_label, frontend_label, NULL };
	struct tbx_egress egress;
	int rc;

	snprintf(session_label, sizeof(session_label), "twinbox.session=%s", s->row.id);
	snprintf(frontend_label, sizeof(frontend_label), "twinbox.frontend=%s", s->row.frontend);
	spec.labels = labels;
	spec.timeout_s = SANDBOX_TIMEOUT_S;
	spec.flags = TBX_SANDBOX_PAUSE_ON_TIMEOUT;
	/* The twin first: its credential goes into the spec (DESIGN §7). */
	if ((rc = session_egress_prepare(s, &egress)) < 0)
		return rc;
	tbx_egress_spec(&egress, &spec);
	tbx_sandbox_info_init(&info);
	rc = tbx_engine_sandbox_create(s->engine, cancel, &spec, &info);
	if (rc < 0) {
		tbx_error_prefix("cannot create a sandbox for session %s", s->row.id);
		goto out;
	}
	if (!info.id || !info.workdir) {
		tbx_engine_sandbox_kill(s->engine, NULL, info.id ? info.id : "");
		rc = tbx_error_set(TBX_EPROTO, "the %s engine created a sandbox without an id or workdir",
				   tbx_engine_name(s->engine));
		goto out;
	}
	rc = tbx_store_session_set_sandbox(core->store, s->row.id, info.id, info.workdir);
	if (rc < 0) {
		/* Not recorded means nobody could ever find it again: do not leak it. */
		tbx_engine_sandbox_kill(s->engine, NULL, info.id);
	} else if ((rc = set_row_string(&s->row.sandbox_id, info.id)) == 0 &&
		   (rc = set_row_string(&s->row.workdir, info.workdir)) == 0) {
		tbx_log_info("session %s: created sandbox %s on %s", s->row.id, info.id,
			     tbx_engine_name(s->engine));
		tbx_store_event_append(core->store, s->row.id, "sandbox.created", NULL);
		if (s->row.repo_root)
			session_adopt_locked(s, replacing);
		tbx_egress_install(&egress, s->engine, cancel, info.id);
		session_egress_record(s, &egress, "made");
	}
out:
	if (rc < 0)
		session_egress_abandon(s, &egress);
	tbx_sandbox_info_clear(&info);
	tbx_egress_clear(&egress);
	return rc;
}

/* Make sure s has a running sandbox: exactly one create however many callers race. */
static int session_ensure_sandbox(struct tbx_session *s, const atomic_int *cancel)
{
	struct tbx_core *core = s->owner->core;
	struct tbx_sandbox_info info;
	int rc = 0, replacing = 0;

	pthread_mutex_lock(&s->lock);
	if ((rc = session_check_live(s)) < 0 || s->sandbox_ready)
		goto unlock;
	if (!s->engine && (rc = tbx_core_engine(core, s->row.engine, &s->engine)) < 0)
		goto unlock;
	if (s->row.sandbox_id) {
		tbx_sandbox_info_init(&info);
		rc = tbx_engine_sandbox_connect(s->engine, cancel, s->row.sandbox_id,
						SANDBOX_TIMEOUT_S, &info);
		if (rc == 0 && info.workdir && (!s->row.workdir || strcmp(info.workdir, s->row.workdir)))
			set_row_string(&s->row.workdir, info.workdir);
		tbx_sandbox_info_clear(&info);
		if (rc == TBX_EGONE || rc == TBX_ENOENT) {
			/* The engine lost it: replace it and go on (DESIGN §4). */
			tbx_log_warn("session %s: sandbox %s is gone (%s); creating a new one",
				     s->row.id, s->row.sandbox_id, tbx_error_message());
			tbx_store_event_append(core->store, s->row.id, "sandbox.lost", NULL);
			set_row_string(&s->row.sandbox_id, NULL);
			replacing = 1;
			rc = 0;
		} else if (rc < 0) {
			tbx_error_prefix("cannot resume sandbox %s of session %s", s->row.sandbox_id,
					 s->row.id);
			goto unlock;
		}
	}
	if (!s->row.sandbox_id) {
		if ((rc = session_create_sandbox(s, cancel, replacing)) < 0)
			goto unlock;
	} else {
		session_egress_resume(s, cancel);
	}
	s->sandbox_ready = 1;
unlock:
	pthread_mutex_unlock(&s->lock);
	return rc;
}

static void session_touch(struct tbx_session *s)
{
	int64_t now = tbx_now_ms();
	int due;

	pthread_mutex_lock(&s->lock);
	due = now - s->touched_at >= TOUCH_INTERVAL_MS;
	if (due) {
		s->touched_at = now;
		s->row.last_used_at = now;
	}
	pthread_mutex_unlock(&s->lock);
	if (due)
		tbx_store_session_touch(s->owner->core->store, s->row.id);
}

/* Pending egress and sync notices ride on the next tool result, once, as "notice". */
static void session_deliver_notice(struct tbx_session *s, struct json_object *result)
{
	char *notice;

	pthread_mutex_lock(&s->lock);
	if (s->egress_notice && s->notice_pending) {
		if (asprintf(&notice, "%s\n%s", s->egress_notice, s->notice_pending) < 0)
			notice = NULL;
	} else {
		notice = s->egress_notice ? s->egress_notice : s->notice_pending;
		s->egress_notice = s->notice_pending = NULL;
	}
	free(s->notice_pending);
	free(s->egress_notice);
	s->notice_pending = s->egress_notice = NULL;
	pthread_mutex_unlock(&s->lock);
	if (notice && result)
		json_object_object_add(result, "notice", json_object_new_string(notice));
	free(notice);
}

struct sync_progress {
	void (*fn)(void *payload, const char *phase, uint64_t done, uint64_t total);
	void *payload;
	int64_t last_ms;
	char last_phase[16];
};

/* Pass on a phase change at once, and counts at most every SYNC_PROGRESS_MS. */
static void sync_progress_throttle(void *payload, const char *phase, uint64_t done, uint64_t total)
{
	struct sync_progress *p = payload;
	int64_t now = tbx_now_ms();

	if (strcmp(phase, p->last_phase) == 0 && now - p->last_ms < SYNC_PROGRESS_MS &&
	    !(total && done == total))
		return;
	snprintf(p->last_phase, sizeof(p->last_phase), "%s", phase);
	p->last_ms = now;
	p->fn(p->payload, phase, done, total);
}

/*
 * Bring the sandbox's work home. The sandbox must be ready (the caller
 * resolved it). Serialised per session by sync_lock; s->lock is taken only
 * briefly, so tool calls go on while bundles move.
 */
static int session_sync_run(struct tbx_session *s, struct tbx_engine *engine,
			    const char *sandbox_id, const char *workdir, const char *message,
			    const atomic_int *cancel, struct sync_progress *progress,
			    char **summary_out, struct json_object **metadata_out)
{
	struct tbx_core *core = s->owner->core;
	struct tbx_git_progress gp = { .fn = sync_progress_throttle, .payload = progress };
	struct tbx_git_sync_opts opts = { .message = message, .cancel = cancel,
					  .progress = progress && progress->fn ? &gp : NULL };
	struct tbx_git_home_result res;
	struct tbx_sync_sandbox port;
	char *repo_root = NULL, *id = NULL;
	int64_t n;
	int rc;

	*summary_out = NULL;
	*metadata_out = NULL;
	pthread_mutex_lock(&s->sync_lock);
	pthread_mutex_lock(&s->lock);
	repo_root = s->row.repo_root ? strdup(s->row.repo_root) : NULL;
	id = strdup(s->row.id);
	n = s->row.branch_number;
	if (repo_root && n == 0) {
		session_branch_allocate(core, &s->row);
		n = s->row.branch_number;
	}
	pthread_mutex_unlock(&s->lock);
	if (!id) {
		rc = tbx_error_set(TBX_ENOMEM, "out of memory");
		goto out;
	}
	if (!repo_root) {
		rc = tbx_error_set(TBX_ENOTSUP, "git sync is off for session %s: its directory is "
				   "not in a git repository, so there is no branch to bring the work "
				   "home to (move files with read and write instead)", id);
		goto out;
	}
	if (n == 0) {
		rc = tbx_error_set(TBX_EUNAVAIL, "session %s has no branch number yet (%s); try "
				   "again", id, tbx_error_message());
		goto out;
	}
	tbx_sync_sandbox_init(&port, engine, sandbox_id, workdir, id, cancel);
	rc = tbx_git_sync_home(repo_root, n, &port.port, &opts, &res);
	pthread_mutex_lock(&s->lock);
	if (rc == 0) {
		*summary_out = tbx_git_home_summary(&res);
		*metadata_out = tbx_git_home_json(&res);
		tbx_sync_status_set(&s->sync, "synced", res.notice);
		json_object_put(s->sync.last);
		/* A copy: the caller goes on changing its own without our lock. */
		s->sync.last = NULL;
		if (*metadata_out && json_object_deep_copy(*metadata_out, &s->sync.last, NULL) == 0 &&
		    *summary_out)
			json_object_object_add(s->sync.last, "summary",
					       json_object_new_string(*summary_out));
	} else {
		tbx_sync_status_set(&s->sync, "failed", tbx_error_message());
	}
	pthread_mutex_unlock(&s->lock);
	if (rc == 0) {
		tbx_log_info("session %s: %s", id, *summary_out ? *summary_out : "synced");
		session_event(s, "git.synced", json_object_get(*metadata_out));
		if (!*summary_out)
			rc = tbx_error_set(TBX_ENOMEM, "out of memory");
	} else {
		struct json_object *ev = json_object_new_object();
		json_object_object_add(ev, "message", json_object_new_string(tbx_error_message()));
		tbx_log_warn("session %s: sync failed: %s", id, tbx_error_message());
		/* The event must not clobber the error the caller reports. */
		{
			int status = tbx_error_status();
			char *msg = strdup(tbx_error_message());
			session_event(s, "git.sync_failed", ev);
			tbx_error_set(status, "%s", msg ? msg : "sync failed");
			free(msg);
		}
	}
	tbx_git_home_result_clear(&res);
out:
	pthread_mutex_unlock(&s->sync_lock);
	free(repo_root);
	free(id);
	if (rc < 0) {
		free(*summary_out);
		*summary_out = NULL;
		json_object_put(*metadata_out);
		*metadata_out = NULL;
	}
	return rc;
}

static void tool_sync_progress(void *payload, const char *phase, uint64_t done, uint64_t total)
{
	const struct tbx_tool_ctx *ctx = payload;
	char line[128];
	int n;

	if (total)
		n = snprintf(line, sizeof(line), "gitSync: %s %llu/%llu\n", phase,
			     (unsigned long long)done, (unsigned long long)total);
	else
		n = snprintf(line, sizeof(line), "gitSync: %s\n", phase);
	ctx->on_progress(ctx->payload, "sync", line, (size_t)n);
}

/* The gitSync tool's hook: the sandbox is already resolved in ctx. */
static int session_git_sync_tool(void *sync_payload, const struct tbx_tool_ctx *ctx,
				 const char *message, char **summary_out,
				 struct json_object **metadata_out)
{
	struct tbx_session *s = sync_payload;
	struct sync_progress progress = { .fn = ctx->on_progress ? tool_sync_progress : NULL,
					  .payload = (void *)ctx };

	return session_sync_run(s, ctx->engine, ctx->sandbox_id, ctx->workdir, message,
				ctx->cancel, &progress, summary_out, metadata_out);
}

int tbx_session_sync(struct tbx_session *s, const atomic_int *cancel,
		     void (*on_progress)(void *payload, const char *phase, uint64_t done,
					 uint64_t total),
		     void *payload, struct json_object **result_out)
{
	struct sync_progress progress = { .fn = on_progress, .payload = payload };
	struct json_object *meta = NULL;
	char *sandbox_id = NULL, *workdir = NULL, *summary = NULL;
	int has_sandbox, rc;

	*result_out = NULL;
	pthread_mutex_lock(&s->lock);
	has_sandbox = s->row.sandbox_id != NULL;
	rc = session_check_live(s);
	pthread_mutex_unlock(&s->lock);
	if (rc < 0)
		return rc;
	/* Syncing never makes a sandbox: with none, there is no work to bring home. */
	if (!has_sandbox)
		return tbx_error_set(TBX_ENOENT, "nothing to sync yet: session %s has not used a "
				     "sandbox", s->row.id);
	if ((rc = session_ensure_sandbox(s, cancel)) < 0)
		return rc;
	pthread_mutex_lock(&s->lock);
	sandbox_id = strdup(s->row.sandbox_id);
	workdir = strdup(s->row.workdir);
	pthread_mutex_unlock(&s->lock);
	if (!sandbox_id || !workdir) {
		rc = tbx_error_set(TBX_ENOMEM, "out of memory");
		goto out;
	}
	rc = session_sync_run(s, s->engine, sandbox_id, workdir, NULL, cancel, &progress, &summary,
			      &meta);
	if (rc == 0) {
		json_object_object_add(meta, "summary", json_object_new_string(summary));
		*result_out = meta;
		meta = NULL;
	}
out:
	free(sandbox_id);
	free(workdir);
	free(summary);
	json_object_put(meta);
	return rc;
}

int tbx_session_sync_idle(struct tbx_session *s)
{
	struct json_object *result = NULL;
	int skip, rc;

	pthread_mutex_lock(&s->lock);
	skip = !s->row.repo_root || !s->row.sandbox_id || !s->sandbox_ready ||
	       strcmp(s->row.state, TBX_SESSION_DELETED) == 0;
	pthread_mutex_unlock(&s->lock);
	if (skip)
		return 0;
	rc = tbx_session_sync(s, NULL, NULL, NULL, &result);
	json_object_put(result);
	return rc;
}

int tbx_session_tool_call(struct tbx_session *s, const char *tool, struct json_object *args,
			  const atomic_int *cancel,
			  void (*on_progress)(void *payload, const char *stream, const char *data,
					      size_t len),
			  void *payload, struct json_object **result_out)
{
	struct tbx_tool_ctx ctx = { 0 };
	char *sandbox_id = NULL, *workdir = NULL, *local_root = NULL;
	int rc;

	if (!tbx_tool_find(tool)) /* fail before making a sandbox for nothing */
		return tbx_tool_call(&ctx, tool, args, result_out);
	for (int attempt = 0;; attempt++) {
		if ((rc = session_ensure_sandbox(s, cancel)) < 0)
			return rc;
		pthread_mutex_lock(&s->lock);
		sandbox_id = strdup(s->row.sandbox_id);
		workdir = strdup(s->row.workdir);
		local_root = strdup(s->row.repo_root ? s->row.repo_root : s->row.project_dir);
		pthread_mutex_unlock(&s->lock);
		ctx.engine = s->engine;
		ctx.sandbox_id = sandbox_id;
		ctx.workdir = workdir;
		ctx.local_root = local_root;
		ctx.cancel = cancel;
		ctx.on_progress = on_progress;
		ctx.payload = payload;
		ctx.git_sync = session_git_sync_tool;
		ctx.sync_payload = s;
		rc = tbx_tool_call(&ctx, tool, args, result_out);
		if (rc == TBX_EGONE && attempt == 0) {
			/* Lost between resolve and use: forget it, resolve again once. */
			pthread_mutex_lock(&s->lock);
			if (s->row.sandbox_id && strcmp(s->row.sandbox_id, sandbox_id) == 0)
				s->sandbox_ready = 0;
			pthread_mutex_unlock(&s->lock);
			free(sandbox_id);
			free(workdir);
			free(local_root);
			continue;
		}
		break;
	}
	free(sandbox_id);
	free(workdir);
	free(local_root);
	if (rc == 0)
		session_deliver_notice(s, *result_out);
	session_touch(s);
	return rc;
}

static int session_set_state(struct tbx_session *s, const char *state)
{
	int rc = tbx_store_session_set_state(s->owner->core->store, s->row.id, state);

	return rc < 0 ? rc : set_row_string(&s->row.state, state);
}

int tbx_session_close(struct tbx_session *s)
{
	int rc;

	pthread_mutex_lock(&s->lock);
	if ((rc = session_check_live(s)) == 0)
		rc = session_set_state(s, TBX_SESSION_CLOSED);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/*
 * The twin goes with the session (DESIGN §4). One the service cannot delete
 * now does not keep the session: it is logged and recorded as an event.
 * Called with s->lock held.
 */
static void session_twin_delete(struct tbx_session *s)
{
	struct tbx_core *core = s->owner->core;
	struct json_object *ev = json_object_new_object();

	json_object_object_add(ev, "twin_id", json_object_new_string(s->row.twin_id));
	if (core->twin && tbx_twin_delete(core->twin, s->row.twin_id) == 0) {
		tbx_log_info("session %s: deleted twin %s", s->row.id, s->row.twin_id);
		session_event(s, "twin.deleted", ev);
		return;
	}
	tbx_log_warn("session %s: cannot delete twin %s: %s", s->row.id, s->row.twin_id,
		     core->twin ? tbx_error_message() : "no twin service");
	json_object_object_add(ev, "message", json_object_new_string(
		core->twin ? tbx_error_message() : "no twin service"));
	session_event(s, "twin.delete_failed", ev);
	tbx_error_clear();
}

int tbx_session_delete(struct tbx_session *s, const atomic_int *cancel)
{
	struct tbx_core *core = s->owner->core;
	int rc;

	pthread_mutex_lock(&s->lock);
	if ((rc = session_check_live(s)) < 0)
		goto unlock;
	if (s->row.sandbox_id) {
		if (!s->engine && (rc = tbx_core_engine(core, s->row.engine, &s->engine)) < 0)
			goto unlock;
		rc = tbx_engine_sandbox_kill(s->engine, cancel, s->row.sandbox_id);
		if (rc < 0 && rc != TBX_ENOENT && rc != TBX_EGONE) {
			tbx_error_prefix("cannot kill sandbox %s of session %s; the session is kept",
					 s->row.sandbox_id, s->row.id);
			goto unlock;
		}
		tbx_log_info("session %s: killed sandbox %s", s->row.id, s->row.sandbox_id);
	}
	if (s->row.twin_id)
		session_twin_delete(s);
	s->sandbox_ready = 0;
	rc = session_set_state(s, TBX_SESSION_DELETED);
	if (rc == 0)
		tbx_store_event_append(core->store, s->row.id, "session.deleted", NULL);
unlock:
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int tbx_session_twin(struct tbx_session *s, struct json_object *since, int limit,
		     struct json_object **out)
{
	struct tbx_core *core = s->owner->core;
	struct json_object *egress;
	char *twin_id = NULL;
	int rc;

	*out = NULL;
	pthread_mutex_lock(&s->lock);
	rc = session_check_live(s);
	twin_id = s->row.twin_id ? strdup(s->row.twin_id) : NULL;
	egress = session_egress_json(s);
	pthread_mutex_unlock(&s->lock);
	if (rc == 0 && !twin_id)
		rc = tbx_error_set(TBX_ENOENT, "session %s has no twin (%s)", s->row.id,
				   s->row.no_twin ? "it was opened with --no-twin"
						  : "none is made until its sandbox is; see its \"egress\"");
	if (rc == 0 && !core->twin)
		rc = tbx_error_set(TBX_EUNAVAIL, "this daemon has no twin service");
	/* The control plane is not called with the session's lock held: tools go on meanwhile. */
	if (rc == 0 && (rc = tbx_twin_requests(core->twin, twin_id, since, limit, out)) == 0)
		json_object_object_add(*out, "egress", json_object_get(egress));
	json_object_put(egress);
	free(twin_id);
	return rc;
}
