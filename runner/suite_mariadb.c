/* SPDX-License-Identifier: MIT */
/*
 * mariadb-aria, mariadb-innodb: a private mariadbd (mariadb_server.c) in a
 * fresh data directory per round, with the variant's engine as the default
 * storage engine. Metrics: system-table initialisation, then four client
 * sessions (process start, connect, SQL, exit) timed one by one. The SQL
 * is built in setup; every answer is checked, so a wrong engine or an
 * empty result cannot pass as fast.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_process.h"
#include "mariadb_server.h"
#include "suite.h"

#define ROWS 100
#define DATABASE "bench"

static const struct metric_def metrics[] = {
	{ "bootstrap_ms", "ms", LOWER_IS_BETTER, "mariadb-install-db: system tables of a fresh datadir" },
	{ "query_create_ms", "ms", LOWER_IS_BETTER, "client session: CREATE TABLE x2" },
	{ "query_insert_ms", "ms", LOWER_IS_BETTER, "client session: 100 single-row INSERTs into each table" },
	{ "query_select_ms", "ms", LOWER_IS_BETTER, "client session: SELECT with WHERE" },
	{ "query_join_ms", "ms", LOWER_IS_BETTER, "client session: JOIN of the two tables, grouped" },
};

static const struct artifact_def artifacts[] = {
	MARIADB_ARTIFACTS,
};

static const char sql_create[] =
	"CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(64) NOT NULL,"
	" city VARCHAR(32) NOT NULL, KEY (city));"
	"CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NOT NULL,"
	" amount DECIMAL(10,2) NOT NULL, KEY (customer_id));";
/* Customers in city-3: ids 3, 13, ..., 93. */
static const char sql_select[] =
	"SELECT id, name FROM customers WHERE city = 'city-3' ORDER BY id;";
#define SELECT_ROWS (ROWS / 10)
/* customer_id = i * 7 % 100 + 1 is a permutation: every customer has one order. */
static const char sql_join[] =
	"SELECT c.id, c.name, COUNT(o.id), SUM(o.amount) FROM customers c"
	" JOIN orders o ON o.customer_id = c.id GROUP BY c.id, c.name ORDER BY c.id;";
#define JOIN_ROWS ROWS

static char sql_insert[ROWS * 200];
static struct mariadb_server server;

static int setup_mariadb(struct suite_ctx *ctx, const char *engine)
{
	size_t off = 0;
	for (int i = 1; i <= ROWS; i++)
		off += (size_t)snprintf(sql_insert + off, sizeof(sql_insert) - off,
					"INSERT INTO customers VALUES (%d, 'customer %d', 'city-%d');",
					i, i, i % 10);
	for (int i = 1; i <= ROWS; i++)
		off += (size_t)snprintf(sql_insert + off, sizeof(sql_insert) - off,
					"INSERT INTO orders VALUES (%d, %d, %d.%02d);", i,
					i * 7 % ROWS + 1, i * 3 % 97, i % 100);
	if (off >= sizeof(sql_insert))
		return -ENOBUFS;
	char *version = mariadb_server_version(ctx);
	suite_note(ctx, "mariadbd", version);
	suite_note(ctx, "engine", engine);
	free(version);
	return 0;
}

static size_t count_lines(const char *text)
{
	size_t n = 0;
	for (; *text; text++)
		n += *text == '\n';
	return n;
}

/* One timed client session whose output must have rows lines. */
static int timed_query(struct suite_ctx *ctx, const char *metric, const char *sql,
		       long rows)
{
	double ms;
	char *out = NULL;
	int err = mariadb_server_query(ctx, &server, DATABASE, sql, true, &ms, &out);
	if (err)
		return err;
	if (rows >= 0 && count_lines(out) != (size_t)rows) {
		fprintf(stderr, "krunner: %s: expected %ld rows, the server returned %zu\n",
			metric, rows, count_lines(out));
		free(out);
		return -EPROTO;
	}
	free(out);
	return suite_metric(ctx, metric, ms);
}

static int check_engine(struct suite_ctx *ctx, const char *engine)
{
	char *out = NULL, want[64];
	double ms;
	int err = mariadb_server_query(ctx, &server, NULL,
				       "SELECT ENGINE, COUNT(*) FROM information_schema.TABLES"
				       " WHERE TABLE_SCHEMA = '" DATABASE "' GROUP BY ENGINE;",
				       false, &ms, &out);
	if (err)
		return err;
	snprintf(want, sizeof(want), "%s\t2\n", engine);
	if (strcmp(out, want) != 0) {
		fprintf(stderr, "krunner: the tables are not both %s: %s", engine, out);
		err = -EPROTO;
	}
	free(out);
	return err;
}

static int round_steps(struct suite_ctx *ctx, const char *engine)
{
	double ms;
	int err = mariadb_server_create(&server, suite_scratch_dir(ctx));
	if (!err)
		err = mariadb_server_bootstrap(ctx, &server, true, &ms);
	if (!err)
		err = suite_metric(ctx, "bootstrap_ms", ms);
	if (!err)
		err = mariadb_server_start(ctx, &server, engine, true);
	if (!err)
		err = mariadb_server_query(ctx, &server, NULL, "CREATE DATABASE " DATABASE ";",
					   false, &ms, NULL);
	if (!err)
		err = timed_query(ctx, "query_create_ms", sql_create, 0);
	if (!err)
		err = check_engine(ctx, engine);
	if (!err)
		err = timed_query(ctx, "query_insert_ms", sql_insert, 0);
	if (!err)
		err = timed_query(ctx, "query_select_ms", sql_select, SELECT_ROWS);
	if (!err)
		err = timed_query(ctx, "query_join_ms", sql_join, JOIN_ROWS);
	return err;
}

static int round_mariadb(struct suite_ctx *ctx, const char *engine)
{
	int err = round_steps(ctx, engine);
	mariadb_server_destroy(ctx, &server);
	return err;
}

static int setup_aria(struct suite_ctx *ctx) { return setup_mariadb(ctx, "Aria"); }
static int round_aria(struct suite_ctx *ctx) { return round_mariadb(ctx, "Aria"); }
static int setup_innodb(struct suite_ctx *ctx) { return setup_mariadb(ctx, "InnoDB"); }
static int round_innodb(struct suite_ctx *ctx) { return round_mariadb(ctx, "InnoDB"); }

static void teardown_mariadb(struct suite_ctx *ctx)
{
	mariadb_server_destroy(ctx, &server);
}

/* The two variants differ by their engine only. */
#define MARIADB_SUITE(engine_name, engine)                                              \
	{                                                                               \
		.name = "mariadb-" #engine,                                             \
		.description = "private mariadbd (" engine_name "): bootstrap, then "   \
			       "create/insert/select/join client sessions",             \
		.metrics = metrics, .n_metrics = ARRAY_SIZE(metrics),                  \
		.artifacts = artifacts, .n_artifacts = ARRAY_SIZE(artifacts),          \
		.default_rounds = SUITE_APP_ROUNDS, .warmup_rounds = 1,                 \
		.setup = setup_##engine, .round = round_##engine,                       \
		.teardown = teardown_mariadb,                                           \
	}

static const struct suite mariadb_aria = MARIADB_SUITE("Aria", aria);
static const struct suite mariadb_innodb = MARIADB_SUITE("InnoDB", innodb);

SUITE_REGISTER(mariadb_aria)
SUITE_REGISTER(mariadb_innodb)
