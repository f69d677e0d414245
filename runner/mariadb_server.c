/* SPDX-License-Identifier: MIT */
/*
 * mariadb_server: the private mariadbd of the mariadb-* and wordpress
 * suites (see mariadb_server.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "app_process.h"
#include "exec.h"
#include "mariadb_server.h"

#define INSTALL_TIMEOUT_MS 180000
#define READY_TIMEOUT_MS 60000
#define QUERY_TIMEOUT_MS 120000
#define SHUTDOWN_TIMEOUT_MS 30000
#define TERM_GRACE_MS 10000

int mariadb_server_create(struct mariadb_server *server, const char *parent)
{
	memset(server, 0, sizeof(*server));
	const char *verbose = getenv("MARIADB_BENCH_VERBOSE");
	server->verbose = verbose && strcmp(verbose, "1") == 0;
	if (snprintf(server->dir, sizeof(server->dir), "%s/mariadb.XXXXXX", parent) >=
	    (int)sizeof(server->dir))
		return -ENAMETOOLONG;
	if (!mkdtemp(server->dir)) {
		int err = -errno;
		fprintf(stderr, "krunner: cannot create %s: %s\n", server->dir, strerror(errno));
		server->dir[0] = '\0';
		return err;
	}
	snprintf(server->datadir, sizeof(server->datadir), "%s/data", server->dir);
	snprintf(server->log, sizeof(server->log), "%s/mariadb.log", server->dir);
	if (snprintf(server->socket, sizeof(server->socket), "%s/mysqld.sock", server->dir) >=
	    (int)sizeof(server->socket)) {
		fprintf(stderr, "krunner: the socket path %s/mysqld.sock is longer than a unix "
			"socket allows (%zu bytes); use a shorter TMPDIR\n", server->dir,
			sizeof(server->socket) - 1);
		return -ENAMETOOLONG;
	}
	return 0;
}

static const char *log_for(const struct mariadb_server *server)
{
	return server->verbose ? NULL : server->log;
}

int mariadb_server_bootstrap(struct suite_ctx *ctx, struct mariadb_server *server,
			     bool measured, double *elapsed_ms)
{
	char datadir[PATH_MAX + 16];
	snprintf(datadir, sizeof(datadir), "--datadir=%s", server->datadir);
	const char *argv[] = { suite_artifact_path(ctx, "mariadb-install-db"), "--no-defaults",
			       "--auth-root-authentication-method=normal", datadir,
			       "--user=root", "--skip-test-db", NULL };
	if (geteuid() != 0)
		argv[4] = "--skip-name-resolve";	/* --user only as root */
	struct app_command cmd = { .argv = argv, .log_path = log_for(server),
				   .timeout_ms = INSTALL_TIMEOUT_MS, .launched = measured };
	int status;
	char text[96];
	int err = app_run(ctx, &cmd, &status, elapsed_ms, NULL);
	if (!err && !app_exited_ok(status)) {
		fprintf(stderr, "krunner: mariadb-install-db failed (%s)\n",
			app_status_text(status, text, sizeof(text)));
		err = -ECHILD;
	}
	if (err && err != -EINTR && !server->verbose)
		app_print_log_tail(server->log, 15);
	return err;
}

static bool socket_accepts(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	bool ok = connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0;
	close(fd);
	return ok;
}

int mariadb_server_start(struct suite_ctx *ctx, struct mariadb_server *server,
			 const char *engine, bool profiled)
{
	char datadir[PATH_MAX + 16], socket_arg[160], pid_file[PATH_MAX + 16],
		tmpdir[PATH_MAX + 16], engine_arg[64], text[96];
	snprintf(datadir, sizeof(datadir), "--datadir=%s", server->datadir);
	snprintf(socket_arg, sizeof(socket_arg), "--socket=%s", server->socket);
	snprintf(pid_file, sizeof(pid_file), "--pid-file=%s/mysqld.pid", server->dir);
	snprintf(tmpdir, sizeof(tmpdir), "--tmpdir=%s", server->dir);
	snprintf(engine_arg, sizeof(engine_arg), "--default-storage-engine=%s", engine);
	/* Sized for 2 cores and a CI runner: small caches, no binary log. */
	const char *argv[] = { suite_artifact_path(ctx, "mariadbd"), "--no-defaults", datadir,
			       socket_arg, pid_file, tmpdir, "--skip-networking", engine_arg,
			       "--innodb-buffer-pool-size=32M", "--innodb-log-file-size=16M",
			       "--aria-pagecache-buffer-size=16M", "--key-buffer-size=8M",
			       "--max-connections=20", "--skip-log-bin",
			       "--user=root", NULL };
	if (geteuid() != 0)
		argv[ARRAY_SIZE(argv) - 2] = NULL;
	struct app_command cmd = { .argv = argv, .log_path = log_for(server),
				   .profiled = profiled, .launched = profiled };
	int err = app_spawn(ctx, &cmd, &server->pid);
	if (err) {
		server->pid = 0;
		return err;
	}
	double deadline = app_now_ms() + READY_TIMEOUT_MS;
	int status;
	while (!socket_accepts(server->socket)) {
		if (exec_interrupted())
			return -EINTR;
		if (!app_running(server->pid, &status)) {
			server->pid = 0;
			fprintf(stderr, "krunner: mariadbd ended before it accepted connections (%s)\n",
				app_status_text(status, text, sizeof(text)));
			if (!server->verbose)
				app_print_log_tail(server->log, 15);
			return -ECHILD;
		}
		if (app_now_ms() > deadline) {
			fprintf(stderr, "krunner: mariadbd did not accept connections on %s within "
				"%d s\n", server->socket, READY_TIMEOUT_MS / 1000);
			if (!server->verbose)
				app_print_log_tail(server->log, 15);
			return -ETIMEDOUT;
		}
		struct timespec ts = { 0, 10 * 1000000 };
		nanosleep(&ts, NULL);
	}
	return 0;
}

int mariadb_server_query(struct suite_ctx *ctx, struct mariadb_server *server,
			 const char *database, const char *sql, bool profiled,
			 double *elapsed_ms, char **output)
{
	char socket_arg[160], text[96];
	snprintf(socket_arg, sizeof(socket_arg), "--socket=%s", server->socket);
	const char *argv[] = { suite_artifact_path(ctx, "mariadb"), "--no-defaults", socket_arg,
			       "--user=root", "--batch", "--skip-column-names", "-e", sql,
			       database, NULL };
	struct app_command cmd = { .argv = argv, .profiled = profiled, .launched = profiled,
				   .timeout_ms = QUERY_TIMEOUT_MS };
	int status;
	char *out = NULL;
	int err = app_run(ctx, &cmd, &status, elapsed_ms, &out);
	if (!err && !app_exited_ok(status)) {
		fprintf(stderr, "krunner: the mariadb client failed (%s) on: %.200s%s\n",
			app_status_text(status, text, sizeof(text)), sql,
			strlen(sql) > 200 ? "..." : "");
		err = -ECHILD;
	}
	if (output && !err)
		*output = out;
	else
		free(out);
	return err;
}

void mariadb_server_destroy(struct suite_ctx *ctx, struct mariadb_server *server)
{
	if (server->pid > 0) {
		bool clean = false;
		if (!exec_interrupted()) {
			char socket_arg[160];
			snprintf(socket_arg, sizeof(socket_arg), "--socket=%s", server->socket);
			const char *argv[] = { suite_artifact_path(ctx, "mariadb-admin"),
					       "--no-defaults", socket_arg, "--user=root",
					       "shutdown", NULL };
			struct app_command cmd = { .argv = argv, .log_path = log_for(server),
						   .timeout_ms = SHUTDOWN_TIMEOUT_MS };
			int status;
			double ms;
			clean = app_run(ctx, &cmd, &status, &ms, NULL) == 0 && app_exited_ok(status);
		}
		/* After a clean shutdown request the server exits by itself;
		 * otherwise (interrupted, admin failed) SIGTERM at once —
		 * mariadbd shuts down cleanly on it too. */
		app_stop(server->pid, clean ? SHUTDOWN_TIMEOUT_MS : 0, TERM_GRACE_MS);
		server->pid = 0;
	}
	if (server->dir[0]) {
		app_remove_tree(server->dir);
		server->dir[0] = '\0';
	}
}

char *mariadb_server_version(struct suite_ctx *ctx)
{
	const char *argv[] = { suite_artifact_path(ctx, "mariadbd"), "--version", NULL };
	struct app_command cmd = { .argv = argv, .quiet = true, .timeout_ms = 10000 };
	int status;
	double ms;
	char *out = NULL;
	if (app_run(ctx, &cmd, &status, &ms, &out) || !app_exited_ok(status)) {
		free(out);
		return NULL;
	}
	out[strcspn(out, "\n")] = '\0';
	return out;
}
