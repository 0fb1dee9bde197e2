/* SPDX-License-Identifier: MIT */
/*
 * A "host directory" engine for tests: each sandbox is a directory under
 * <data_root>/fake/<id>/, its workdir is <that>/project, commands run with
 * /bin/sh on the host and file ops act on host paths. Every op but
 * preview_url is implemented, so tests also see a NULL op surface as ENOTSUP.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <twinbox/backend.h>

/* How often a running command checks for cancellation and its deadline. */
#define FAKE_POLL_MS 20

static const struct tbx_host_api *host;

struct fake {
	char *root; /* <data_root>/fake */
	pthread_mutex_t lock;
	unsigned next_id;
};

static int fail_errno(struct tbx_call *call, int err, const char *what, const char *path)
{
	int status;

	switch (err) {
	case ENOENT: status = TBX_ENOENT; break;
	case ENOTDIR: status = TBX_ENOTDIR; break;
	case EISDIR: status = TBX_EISDIR; break;
	case EEXIST: status = TBX_EEXIST; break;
	case EACCES:
	case EPERM: status = TBX_EPERM; break;
	case ENOMEM: status = TBX_ENOMEM; break;
	default: status = TBX_EIO; break;
	}
	return host->error_set(call, status, "%s %s: %s", what, path, strerror(err));
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

/* A host->alloc'd formatted string, or NULL. */
static char *fmt(const char *f, ...)
{
	va_list ap;
	char *p;
	int n;

	va_start(ap, f);
	n = vsnprintf(NULL, 0, f, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	p = host->alloc((size_t)n + 1);
	if (!p)
		return NULL;
	va_start(ap, f);
	vsnprintf(p, (size_t)n + 1, f, ap);
	va_end(ap);
	return p;
}

static int mkdirs(const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static int remove_tree(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char child[PATH_MAX];

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
		if (remove_tree(child) != 0)
			rc = -1;
	}
	closedir(d);
	return rc == 0 ? rmdir(path) : rc;
}

static char *sandbox_dir(struct fake *f, const char *id)
{
	/* Ids are ours: refuse anything that could walk out of the root. */
	if (!id || !*id || strchr(id, '/') || strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
		return NULL;
	return fmt("%s/%s", f->root, id);
}

static int fake_instance_new(struct tbx_call *call, void **out)
{
	const char *data_root = host->config_get(call, "data_root");
	struct fake *f;

	if (!data_root || !*data_root)
		return host->error_set(call, TBX_EINVAL, "no data_root to keep fake sandboxes in");
	f = host->alloc(sizeof(*f));
	if (!f)
		return host->error_set(call, TBX_ENOMEM, "out of memory");
	f->root = fmt("%s/fake", data_root);
	pthread_mutex_init(&f->lock, NULL);
	if (!f->root || mkdirs(f->root) != 0) {
		int rc = fail_errno(call, errno, "cannot create", data_root);
		host->free(f->root);
		host->free(f);
		return rc;
	}
	*out = f;
	return 0;
}

static void fake_instance_free(void *instance)
{
	struct fake *f = instance;

	if (!f)
		return;
	pthread_mutex_destroy(&f->lock);
	host->free(f->root);
	host->free(f);
}

static int write_file(const char *path, const char *data, size_t len)
{
	FILE *fp = fopen(path, "wb");

	if (!fp)
		return -1;
	if (len && fwrite(data, 1, len, fp) != len) {
		fclose(fp);
		return -1;
	}
	return fclose(fp);
}

static char **read_labels(const char *dir)
{
	char path[PATH_MAX], line[1024];
	char **labels = NULL;
	size_t n = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/labels", dir);
	fp = fopen(path, "r");
	if (!fp)
		return NULL;
	while (fgets(line, sizeof(line), fp)) {
		char **v = host->realloc(labels, (n + 2) * sizeof(*v));
		if (!v)
			break;
		labels = v;
		line[strcspn(line, "\n")] = '\0';
		labels[n++] = host->strdup(line);
		labels[n] = NULL;
	}
	fclose(fp);
	return labels;
}

static int fill_info(struct fake *f, struct tbx_call *call, const char *id,
		     struct tbx_sandbox_info *out)
{
	char *dir = sandbox_dir(f, id), paused[PATH_MAX];
	struct stat st;

	if (!dir || stat(dir, &st) != 0) {
		host->free(dir);
		return host->error_set(call, TBX_EGONE, "fake sandbox %s does not exist", id);
	}
	snprintf(paused, sizeof(paused), "%s/paused", dir);
	out->id = host->strdup(id);
	out->workdir = fmt("%s/project", dir);
	out->state = access(paused, F_OK) == 0 ? TBX_SANDBOX_PAUSED : TBX_SANDBOX_RUNNING;
	out->labels = read_labels(dir);
	host->free(dir);
	return out->id && out->workdir ? 0 : host->error_set(call, TBX_ENOMEM, "out of memory");
}

static int fake_sandbox_create(void *instance, struct tbx_call *call,
			       const struct tbx_sandbox_spec *spec, struct tbx_sandbox_info *out)
{
	struct fake *f = instance;
	char id[64], *dir, *project;
	unsigned n;

	pthread_mutex_lock(&f->lock);
	n = ++f->next_id;
	pthread_mutex_unlock(&f->lock);
	snprintf(id, sizeof(id), "fake-%ld-%u-%ld", (long)getpid(), n, (long)time(NULL));
	dir = sandbox_dir(f, id);
	project = dir ? fmt("%s/project", dir) : NULL;
	if (!project || mkdirs(project) != 0) {
		int rc = fail_errno(call, project ? errno : ENOMEM, "cannot create", id);
		host->free(dir);
		host->free(project);
		return rc;
	}
	if (spec && spec->labels) {
		char path[PATH_MAX];
		FILE *fp;

		snprintf(path, sizeof(path), "%s/labels", dir);
		fp = fopen(path, "w");
		for (const char *const *l = spec->labels; fp && *l; l++)
			fprintf(fp, "%s\n", *l);
		if (fp)
			fclose(fp);
	}
	host->free(dir);
	host->free(project);
	return fill_info(f, call, id, out);
}

static int fake_sandbox_connect(void *instance, struct tbx_call *call, const char *id,
				uint32_t timeout_s, struct tbx_sandbox_info *out)
{
	struct fake *f = instance;
	char *dir = sandbox_dir(f, id), *paused = dir ? fmt("%s/paused", dir) : NULL;

	(void)timeout_s;
	if (paused)
		unlink(paused); /* connecting resumes */
	host->free(paused);
	host->free(dir);
	return fill_info(f, call, id, out);
}

static int fake_sandbox_set_timeout(void *instance, struct tbx_call *call, const char *id,
				    uint32_t timeout_s)
{
	struct fake *f = instance;
	char *dir = sandbox_dir(f, id);
	int ok = dir && access(dir, F_OK) == 0;

	(void)timeout_s;
	host->free(dir);
	return ok ? 0 : host->error_set(call, TBX_EGONE, "fake sandbox %s does not exist", id);
}

static int fake_sandbox_pause(void *instance, struct tbx_call *call, const char *id)
{
	struct fake *f = instance;
	char *dir = sandbox_dir(f, id), *paused = dir ? fmt("%s/paused", dir) : NULL;
	int rc = 0;

	if (!dir || access(dir, F_OK) != 0)
		rc = host->error_set(call, TBX_EGONE, "fake sandbox %s does not exist", id);
	else if (access(paused, F_OK) == 0)
		rc = host->error_set(call, TBX_EPAUSED, "fake sandbox %s is already paused", id);
	else if (write_file(paused, "", 0) != 0)
		rc = fail_errno(call, errno, "cannot pause", id);
	host->free(paused);
	host->free(dir);
	return rc;
}

static int fake_sandbox_kill(void *instance, struct tbx_call *call, const char *id)
{
	struct fake *f = instance;
	char *dir = sandbox_dir(f, id);
	int rc = 0;

	if (!dir || access(dir, F_OK) != 0)
		rc = host->error_set(call, TBX_ENOENT, "fake sandbox %s does not exist", id ? id : "");
	else if (remove_tree(dir) != 0)
		rc = fail_errno(call, errno, "cannot remove", dir);
	host->free(dir);
	return rc;
}

static int has_labels(char **have, const char *const *want)
{
	for (; want && *want; want++) {
		int found = 0;
		for (char **h = have; h && *h && !found; h++)
			found = strcmp(*h, *want) == 0;
		if (!found)
			return 0;
	}
	return 1;
}

static void free_info(struct tbx_sandbox_info *info)
{
	host->free(info->id);
	host->free(info->workdir);
	for (char **l = info->labels; l && *l; l++)
		host->free(*l);
	host->free(info->labels);
}

static int fake_sandbox_list(void *instance, struct tbx_call *call, const char *const *labels,
			     struct tbx_sandbox_info **out, size_t *n_out)
{
	struct fake *f = instance;
	struct tbx_sandbox_info *v = NULL;
	size_t n = 0;
	struct dirent *e;
	DIR *d = opendir(f->root);

	if (!d)
		return fail_errno(call, errno, "cannot list", f->root);
	while ((e = readdir(d))) {
		struct tbx_sandbox_info info = {.struct_size = sizeof(info), .abi_minor = TBX_ABI_MINOR};
		struct tbx_sandbox_info *nv;

		if (e->d_name[0] == '.' || fill_info(f, call, e->d_name, &info) != 0)
			continue;
		if (!has_labels(info.labels, labels)) {
			free_info(&info);
			continue;
		}
		nv = host->realloc(v, (n + 1) * sizeof(*v));
		if (!nv) {
			free_info(&info);
			break;
		}
		v = nv;
		v[n++] = info;
	}
	closedir(d);
	*out = v;
	*n_out = n;
	return 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void child_exec(const struct tbx_exec_request *req, const char *cwd, int out_fd,
		       int err_fd)
{
	int devnull = open("/dev/null", O_RDONLY);

	/* Its own process group, so a timeout can kill everything it started. */
	setpgid(0, 0);
	if (devnull >= 0)
		dup2(devnull, STDIN_FILENO);
	dup2(out_fd, STDOUT_FILENO);
	dup2(err_fd, STDERR_FILENO);
	if (cwd && chdir(cwd) != 0) {
		dprintf(STDERR_FILENO, "cannot enter %s: %s\n", cwd, strerror(errno));
		_exit(126);
	}
	if (TBX_STRUCT_HAS(req, struct tbx_exec_request, env))
		for (const char *const *e = req->env; e && *e; e++)
			putenv((char *)*e);
	execl("/bin/sh", "sh", "-c", req->command, (char *)NULL);
	_exit(127);
}

static int fake_exec(void *instance, struct tbx_call *call, const char *id,
		     const struct tbx_exec_request *req, tbx_exec_output_cb on_output,
		     void *payload, struct tbx_exec_result *out)
{
	struct fake *f = instance;
	char *dir = sandbox_dir(f, id), *workdir = dir ? fmt("%s/project", dir) : NULL;
	const char *cwd = req->cwd && *req->cwd ? req->cwd : workdir;
	int outp[2], errp[2], status = 0, open_fds = 2, stop = 0, exited = 0;
	long deadline = req->timeout_ms ? now_ms() + (long)req->timeout_ms : 0;
	struct pollfd pf[2];
	pid_t pid;

	if (!dir || access(dir, F_OK) != 0) {
		host->free(workdir);
		host->free(dir);
		return host->error_set(call, TBX_EGONE, "fake sandbox %s does not exist", id);
	}
	if (pipe2(outp, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0) {
		host->free(workdir);
		host->free(dir);
		return fail_errno(call, errno, "cannot run", req->command);
	}
	pid = fork();
	if (pid == 0)
		child_exec(req, cwd, outp[1], errp[1]);
	host->free(workdir);
	host->free(dir);
	close(outp[1]);
	close(errp[1]);
	if (pid < 0) {
		close(outp[0]);
		close(errp[0]);
		return fail_errno(call, errno, "cannot fork for", req->command);
	}
	pf[0] = (struct pollfd){.fd = outp[0], .events = POLLIN};
	pf[1] = (struct pollfd){.fd = errp[0], .events = POLLIN};
	while (open_fds > 0) {
		int ready = poll(pf, 2, exited ? 0 : FAKE_POLL_MS);

		if (!stop && host->is_cancelled(call))
			stop = 2;
		if (!stop && deadline && now_ms() >= deadline)
			stop = 1;
		/* Stop the whole group; the pipes then drain and close. */
		if (stop)
			kill(-pid, SIGKILL);
		/* Once the shell is gone and its pipes are drained we are done, even
		 * if something it put in the background still holds them open. */
		if (ready == 0 && exited)
			break;
		if (!exited && waitpid(pid, &status, WNOHANG) == pid)
			exited = 1;
		if (ready <= 0)
			continue;
		for (int i = 0; i < 2; i++) {
			char buf[4096];
			ssize_t n;

			if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(pf[i].fd, buf, sizeof(buf));
			if (n > 0) {
				if (on_output &&
				    on_output(i == 0 ? TBX_STREAM_STDOUT : TBX_STREAM_STDERR, buf,
					      (size_t)n, payload) != 0 &&
				    !stop)
					stop = 2;
				continue;
			}
			close(pf[i].fd);
			pf[i].fd = -1;
			open_fds--;
		}
	}
	for (int i = 0; i < 2; i++)
		if (pf[i].fd >= 0)
			close(pf[i].fd);
	while (!exited && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	out->timed_out = stop == 1;
	out->cancelled = stop == 2;
	out->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	out->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	return 0;
}

static int fake_file_read(void *instance, struct tbx_call *call, const char *id,
			  const char *path, char **data_out, size_t *len_out)
{
	struct stat st;
	size_t got = 0;
	char *buf;
	int fd;

	(void)instance;
	(void)id;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail_errno(call, errno, "cannot read", path);
	if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
		int err = S_ISDIR(st.st_mode) ? EISDIR : errno;
		close(fd);
		return fail_errno(call, err, "cannot read", path);
	}
	buf = host->alloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return host->error_set(call, TBX_ENOMEM, "out of memory");
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*data_out = buf;
	*len_out = got;
	return 0;
}

static int fake_file_write(void *instance, struct tbx_call *call, const char *id,
			   const char *path, const char *data, size_t len)
{
	char *dir = host->strdup(path), *tmp, *slash;
	int rc = 0;

	(void)instance;
	(void)id;
	if (!dir)
		return host->error_set(call, TBX_ENOMEM, "out of memory");
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdirs(dir) != 0) {
			rc = fail_errno(call, errno, "cannot create", dir);
			host->free(dir);
			return rc;
		}
	}
	host->free(dir);
	/* Write beside it and rename, so a reader never sees half a file. */
	tmp = fmt("%s.tbx-tmp-%ld", path, (long)getpid());
	if (!tmp)
		return host->error_set(call, TBX_ENOMEM, "out of memory");
	if (write_file(tmp, data, len) != 0 || rename(tmp, path) != 0) {
		rc = fail_errno(call, errno, "cannot write", path);
		unlink(tmp);
	}
	host->free(tmp);
	return rc;
}

static void fill_file_info(const char *path, const char *name, const struct stat *st,
			   struct tbx_file_info *out)
{
	out->name = host->strdup(name);
	out->path = host->strdup(path);
	out->type = S_ISREG(st->st_mode)   ? TBX_FILE_REGULAR
		    : S_ISDIR(st->st_mode) ? TBX_FILE_DIRECTORY
		    : S_ISLNK(st->st_mode) ? TBX_FILE_SYMLINK
					   : TBX_FILE_UNKNOWN;
	out->mode = st->st_mode & 07777;
	out->size = (uint64_t)st->st_size;
	out->mtime = (int64_t)st->st_mtime;
	if (S_ISLNK(st->st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlink(path, target, sizeof(target) - 1);
		if (n >= 0) {
			target[n] = '\0';
			out->symlink_target = host->strdup(target);
		}
	}
}

static int fake_file_stat(void *instance, struct tbx_call *call, const char *id,
			  const char *path, struct tbx_file_info *out)
{
	const char *slash = strrchr(path, '/');
	struct stat st;

	(void)instance;
	(void)id;
	if (lstat(path, &st) != 0)
		return fail_errno(call, errno, "cannot stat", path);
	fill_file_info(path, slash ? slash + 1 : path, &st, out);
	return 0;
}

struct listing {
	struct tbx_file_info *v;
	size_t n;
	size_t cap;
};

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Depth-first, names sorted, so the walk order is the same on every host. */
static int list_dir(const char *path, uint32_t depth, struct listing *l)
{
	struct dirent *e;
	char **names = NULL;
	size_t n = 0;
	DIR *d = opendir(path);

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char **v;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		v = realloc(names, (n + 1) * sizeof(*v));
		if (!v)
			break;
		names = v;
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		char child[PATH_MAX];
		struct stat st;

		if (!names[i])
			continue;
		snprintf(child, sizeof(child), "%s%s%s", path, strcmp(path, "/") ? "/" : "", names[i]);
		if (lstat(child, &st) == 0) {
			if (l->n == l->cap) {
				size_t cap = l->cap ? l->cap * 2 : 64;
				struct tbx_file_info *v = host->realloc(l->v, cap * sizeof(*v));
				if (v) {
					l->v = v;
					l->cap = cap;
				}
			}
			if (l->n < l->cap) {
				struct tbx_file_info *fi = &l->v[l->n++];
				memset(fi, 0, sizeof(*fi));
				fi->struct_size = sizeof(*fi);
				fi->abi_minor = TBX_ABI_MINOR;
				fill_file_info(child, names[i], &st, fi);
			}
			if (S_ISDIR(st.st_mode) && depth > 1)
				list_dir(child, depth - 1, l);
		}
		free(names[i]);
	}
	free(names);
	return 0;
}

static int fake_file_list(void *instance, struct tbx_call *call, const char *id,
			  const char *path, uint32_t depth, struct tbx_file_info **out,
			  size_t *n_out)
{
	struct listing l = {0};
	struct stat st;

	(void)instance;
	(void)id;
	if (stat(path, &st) != 0)
		return fail_errno(call, errno, "cannot list", path);
	if (!S_ISDIR(st.st_mode))
		return fail_errno(call, ENOTDIR, "cannot list", path);
	if (list_dir(path, depth ? depth : 1, &l) != 0)
		return fail_errno(call, errno, "cannot list", path);
	*out = l.v;
	*n_out = l.n;
	return 0;
}

static int fake_file_mkdir(void *instance, struct tbx_call *call, const char *id,
			   const char *path)
{
	(void)instance;
	(void)id;
	if (access(path, F_OK) == 0)
		return fail_errno(call, EEXIST, "cannot create", path);
	return mkdirs(path) == 0 ? 0 : fail_errno(call, errno, "cannot create", path);
}

static int fake_file_remove(void *instance, struct tbx_call *call, const char *id,
			    const char *path)
{
	(void)instance;
	(void)id;
	return remove_tree(path) == 0 ? 0 : fail_errno(call, errno, "cannot remove", path);
}

static int fake_file_rename(void *instance, struct tbx_call *call, const char *id,
			    const char *from, const char *to)
{
	(void)instance;
	(void)id;
	return rename(from, to) == 0 ? 0 : fail_errno(call, errno, "cannot rename", from);
}

static const struct tbx_backend_ops fake_ops = {
	.struct_size = sizeof(struct tbx_backend_ops),
	.abi_minor = TBX_ABI_MINOR,
	.instance_new = fake_instance_new,
	.instance_free = fake_instance_free,
	.sandbox_create = fake_sandbox_create,
	.sandbox_connect = fake_sandbox_connect,
	.sandbox_set_timeout = fake_sandbox_set_timeout,
	.sandbox_pause = fake_sandbox_pause,
	.sandbox_kill = fake_sandbox_kill,
	.sandbox_list = fake_sandbox_list,
	.exec = fake_exec,
	.file_read = fake_file_read,
	.file_write = fake_file_write,
	.file_stat = fake_file_stat,
	.file_list = fake_file_list,
	.file_mkdir = fake_file_mkdir,
	.file_remove = fake_file_remove,
	.file_rename = fake_file_rename,
	.preview_url = NULL, /* left out on purpose: exercises TBX_ENOTSUP */
};

static const struct tbx_plugin_desc fake_desc = {
	TBX_PLUGIN_DESC_INIT,
	.kind = TBX_PLUGIN_BACKEND,
	.name = "fake",
	.version = "1.0",
	.description = "test engine: sandboxes are host directories",
	.ops = &fake_ops,
};

TBX_EXPORT const struct tbx_plugin_desc *tbx_plugin_entry_v1(const struct tbx_host_api *h)
{
	host = h;
	return &fake_desc;
}
