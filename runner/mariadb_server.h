/* SPDX-License-Identifier: MIT */
/*
 * mariadb_server: a private mariadbd for one suite — a fresh data
 * directory made with mkdtemp under a scratch directory, system tables
 * created by mariadb-install-db, the server on a unix socket in that
 * directory only (--skip-networking), clients through the `mariadb`
 * program, and a shutdown that always ends with no server and no
 * directory left. Used by the mariadb-* and wordpress suites; both declare
 * the tools in MARIADB_ARTIFACTS.
 */
#ifndef KRUNNER_MARIADB_SERVER_H
#define KRUNNER_MARIADB_SERVER_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>
#include <sys/un.h>

#include "suite.h"

#define MARIADB_ARTIFACTS						\
	{ ARTIFACT_TOOL, "mariadbd", "apt-get install mariadb-server", false }, \
	{ ARTIFACT_TOOL, "mariadb-install-db", "apt-get install mariadb-server", true }, \
	{ ARTIFACT_TOOL, "mariadb", "apt-get install mariadb-client", false }, \
	{ ARTIFACT_TOOL, "mariadb-admin", "apt-get install mariadb-client", false }

struct mariadb_server {
	char dir[PATH_MAX - 64];	/* the mkdtemp directory: everything below */
	char datadir[PATH_MAX];
	char socket[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char log[PATH_MAX];		/* install and server output */
	pid_t pid;			/* 0: not running */
	bool verbose;			/* MARIADB_BENCH_VERBOSE=1: output on stderr */
};

/* Makes the scratch directory under parent. 0 or -errno (message printed). */
int mariadb_server_create(struct mariadb_server *server, const char *parent);
/* mariadb-install-db into the data directory; *elapsed_ms is its run.
 * measured: under --launcher (its time is a metric). */
int mariadb_server_bootstrap(struct suite_ctx *ctx, struct mariadb_server *server,
			     bool measured, double *elapsed_ms);
/* Starts mariadbd with engine as default_storage_engine and waits until the
 * socket accepts a connection (or fails with the server's log shown).
 * profiled: under --profile and --launcher (the server measured). */
int mariadb_server_start(struct suite_ctx *ctx, struct mariadb_server *server,
			 const char *engine, bool profiled);
/* One client session: `mariadb` runs sql in database (NULL: none), batch
 * mode without column names. *elapsed_ms: process start to exit; output
 * (may be NULL) its stdout. Fails with the client's message if it fails. */
int mariadb_server_query(struct suite_ctx *ctx, struct mariadb_server *server,
			 const char *database, const char *sql, bool profiled,
			 double *elapsed_ms, char **output);
/* mariadb-admin shutdown, then SIGTERM, then SIGKILL; removes the
 * directory. Safe to call twice and on a half-made server. */
void mariadb_server_destroy(struct suite_ctx *ctx, struct mariadb_server *server);
/* "mariadbd  Ver 10.11.x-MariaDB..." for the result's notes (malloc'd), or NULL. */
char *mariadb_server_version(struct suite_ctx *ctx);

#endif
