/* SPDX-License-Identifier: MIT */
/*
 * wordpress: WordPress and PHP CLI from Debian against a private mariadbd
 * (mariadb_server.c). Setup starts the server, creates the database and
 * installs the site; each round copies /usr/share/wordpress and the router
 * into a fresh scratch directory with its own wp-config.php (Debian's stub
 * would look in /etc/wordpress) and measures there:
 *   http_first_response_ms  php -S 127.0.0.1:<free port> started, polled
 *                           with a raw HTTP GET until a whole response
 *   cli_require_ms          php -r requiring wp-load.php, start to exit
 * A response carrying a PHP error or warning, a database error page, or a
 * status other than 200/3xx fails the round: it is not the page. With
 * OPcache each metric gets its own empty file cache (file_cache_only, no
 * timestamp validation) in the round's copy.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "app_process.h"
#include "mariadb_server.h"
#include "suite.h"

#define WORDPRESS_DIR "/usr/share/wordpress"
#define DATABASE "wordpress"
#define RESPONSE_TIMEOUT_MS 60000
#define PHP_TIMEOUT_MS 120000
#define SERVER_STOP_MS 5000
/* Twice the profiled servers' flush interval (app_process.c). */
#define PROFILE_FLUSH_WAIT_MS 250

static const struct metric_def metrics[] = {
	{ "http_first_response_ms", "ms", LOWER_IS_BETTER,
	  "php -S start to the first whole HTTP response of the front page" },
	{ "cli_require_ms", "ms", LOWER_IS_BETTER, "php -r 'require wp-load.php': process start to exit" },
};

static const struct artifact_def artifacts[] = {
	{ ARTIFACT_TOOL, "php", "apt-get install php-cli php-mysql php-opcache", false },
	{ ARTIFACT_TOOL, "cp", "apt-get install coreutils", false },
	{ ARTIFACT_INPUT, WORDPRESS_DIR "/wp-load.php", "apt-get install wordpress", false },
	{ ARTIFACT_INPUT, WORDPRESS_DIR "/wp-includes/version.php", "apt-get install wordpress", false },
	{ ARTIFACT_INPUT, WORDPRESS_DIR "/wp-content/themes/twentytwentythree/style.css",
	  "apt-get install wordpress-theme-twentytwentythree", false },
	{ ARTIFACT_INPUT, "programs/wordpress/router.php", "the kprof source tree", false },
	{ ARTIFACT_INPUT, "programs/wordpress/install.php", "the kprof source tree", false },
	MARIADB_ARTIFACTS,
};

static const struct suite_option options[] = {
	{ "url-path", "/", "the path requested for http_first_response_ms" },
	{ "wp-config-extra", "", "PHP code added to each round's wp-config.php before wp-settings.php" },
};

/* What marks a response or output as an error instead of the page: PHP's
 * messages as text (CLI) and as HTML (html_errors, the server's default). */
static const char *const error_markers[] = {
	"Fatal error", "Warning:", "Parse error", "Notice:", "<b>Warning</b>:",
	"<b>Notice</b>:", "<b>Deprecated</b>:", "Deprecated:",
	"Error establishing a database connection", "WordPress database error",
	"There has been a critical error",
};

static struct mariadb_server server;
static bool have_opcache;
static char round_dir[PATH_MAX - 128];

static int run_php(struct suite_ctx *ctx, const char *const *argv, const char *cwd,
		   char **output)
{
	struct app_command cmd = { .argv = argv, .cwd = cwd, .timeout_ms = PHP_TIMEOUT_MS };
	int status;
	double ms;
	char text[96];
	int err = app_run(ctx, &cmd, &status, &ms, output);
	if (!err && !app_exited_ok(status)) {
		fprintf(stderr, "krunner: wordpress: %s failed (%s)%s%s\n", argv[1] ? argv[1] : "php",
			app_status_text(status, text, sizeof(text)),
			output && *output ? ": " : "", output && *output ? *output : "");
		err = -ECHILD;
	}
	return err;
}

/* The site's wp-config.php, written into a copy of WordPress at dir. */
static int write_config(struct suite_ctx *ctx, const char *dir, bool with_extra)
{
	char path[PATH_MAX], *text = NULL;
	snprintf(path, sizeof(path), "%s/wp-config.php", dir);
	int n = asprintf(&text,
		"<?php\n"
		"/* Written by krunner's wordpress suite for this scratch copy; it replaces\n"
		" * Debian's stub, which would read /etc/wordpress/config-*.php. */\n"
		"define('DB_NAME', '" DATABASE "');\n"
		"define('DB_USER', 'root');\n"
		"define('DB_PASSWORD', '');\n"
		"define('DB_HOST', 'localhost:%s');\n"
		"define('DB_CHARSET', 'utf8mb4');\n"
		"define('DB_COLLATE', '');\n"
		"foreach (['AUTH_KEY', 'SECURE_AUTH_KEY', 'LOGGED_IN_KEY', 'NONCE_KEY', 'AUTH_SALT',\n"
		"          'SECURE_AUTH_SALT', 'LOGGED_IN_SALT', 'NONCE_SALT'] as $key)\n"
		"    define($key, 'krunner benchmark site, never public: ' . $key);\n"
		"$table_prefix = 'wp_';\n"
		"define('WP_DEBUG', false);\n"
		"define('WP_HOME', 'http://' . ($_SERVER['HTTP_HOST'] ?? '127.0.0.1'));\n"
		"define('WP_SITEURL', WP_HOME);\n"
		"define('AUTOMATIC_UPDATER_DISABLED', true);\n"
		"define('DISABLE_WP_CRON', true);\n"
		"define('WP_HTTP_BLOCK_EXTERNAL', true);\n"
		"%s\n"
		"if (!defined('ABSPATH'))\n"
		"    define('ABSPATH', __DIR__ . '/');\n"
		"require_once ABSPATH . 'wp-settings.php';\n",
		server.socket, with_extra ? suite_option(ctx, "wp-config-extra") : "");
	if (n < 0)
		return -ENOMEM;
	int err = app_write_file(path, text);
	free(text);
	if (err)
		fprintf(stderr, "krunner: wordpress: cannot write %s: %s\n", path, strerror(-err));
	return err;
}

/* A copy of WordPress with the router and the config at dir. */
static int make_site(struct suite_ctx *ctx, const char *dir, bool with_extra)
{
	const char *argv[] = { "cp", "-rL", WORDPRESS_DIR, dir, NULL };
	struct app_command cmd = { .argv = argv, .timeout_ms = 300000 };
	int status;
	double ms;
	int err = app_run(ctx, &cmd, &status, &ms, NULL);
	if (!err && !app_exited_ok(status)) {
		fprintf(stderr, "krunner: wordpress: cannot copy " WORDPRESS_DIR " to %s\n", dir);
		err = -ECHILD;
	}
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/router.php", dir);
	char *router = err ? NULL : app_read_file(suite_artifact_path(ctx, "programs/wordpress/router.php"));
	if (!err && !router)
		err = -EIO;
	if (!err)
		err = app_write_file(path, router);
	free(router);
	if (!err)
		err = write_config(ctx, dir, with_extra);
	return err;
}

static void note_versions(struct suite_ctx *ctx)
{
	const char *php = suite_artifact_path(ctx, "php");
	const char *php_argv[] = { php, "-r", "echo PHP_VERSION;", NULL };
	const char *wp_argv[] = { php, "-r",
				  "include '" WORDPRESS_DIR "/wp-includes/version.php'; echo $wp_version;",
				  NULL };
	char *out = NULL;
	if (run_php(ctx, php_argv, NULL, &out) == 0)
		suite_note(ctx, "php", out);
	free(out);
	out = NULL;
	if (run_php(ctx, wp_argv, NULL, &out) == 0)
		suite_note(ctx, "wordpress", out);
	free(out);
	out = NULL;
	const char *opcache_argv[] = { php, "-d", "opcache.enable_cli=1", "-r",
				       "echo function_exists('opcache_get_status') ? 1 : 0;", NULL };
	have_opcache = run_php(ctx, opcache_argv, NULL, &out) == 0 && strcmp(out, "1") == 0;
	free(out);
	suite_note(ctx, "opcache", have_opcache ? "file_cache_only, validate_timestamps=0, "
						   "a fresh cache per metric"
						 : "not available (php-opcache not loaded)");
	char *version = mariadb_server_version(ctx);
	suite_note(ctx, "mariadbd", version);
	free(version);
}

static int setup_steps(struct suite_ctx *ctx)
{
	const char *php = suite_artifact_path(ctx, "php");
	const char *mysqli_argv[] = { php, "-r", "exit(extension_loaded('mysqli') ? 0 : 1);", NULL };
	struct app_command check = { .argv = mysqli_argv, .quiet = true, .timeout_ms = 30000 };
	int status;
	double ms;
	int err = app_run(ctx, &check, &status, &ms, NULL);
	if (err)
		return err;
	if (!app_exited_ok(status)) {
		fprintf(stderr, "krunner: wordpress: php has no mysqli extension: "
			"apt-get install php-mysql\n");
		return -ENOENT;
	}
	note_versions(ctx);
	err = mariadb_server_create(&server, suite_scratch_dir(ctx));
	if (!err)
		err = mariadb_server_bootstrap(ctx, &server, false, &ms);
	if (!err)
		err = mariadb_server_start(ctx, &server, "InnoDB", false);
	if (!err)
		err = mariadb_server_query(ctx, &server, NULL,
					   "CREATE DATABASE " DATABASE " CHARACTER SET utf8mb4;",
					   false, &ms, NULL);
	char site[PATH_MAX];
	snprintf(site, sizeof(site), "%s/install-site", suite_scratch_dir(ctx));
	if (!err)
		err = make_site(ctx, site, false);
	const char *install_argv[] = { php, suite_artifact_path(ctx, "programs/wordpress/install.php"),
				       NULL };
	char *out = NULL;
	if (!err)
		err = run_php(ctx, install_argv, site, &out);
	if (!err)
		suite_note(ctx, "install", strtok(out, "\n"));
	free(out);
	app_remove_tree(site);
	return err;
}

static int setup_wordpress(struct suite_ctx *ctx)
{
	int err = setup_steps(ctx);
	if (err)
		mariadb_server_destroy(ctx, &server);
	return err;
}

static const char *find_error(const char *text)
{
	for (size_t i = 0; i < ARRAY_SIZE(error_markers); i++) {
		const char *hit = strstr(text, error_markers[i]);
		if (hit)
			return hit;
	}
	return NULL;
}

/* The php options of one metric: OPcache's file cache in dir/name. */
static int php_options(const char *dir, const char *name, char cache_arg[PATH_MAX + 32],
		       const char **args, size_t *n)
{
	args[(*n)++] = "-d";
	args[(*n)++] = "display_errors=1";	/* errors into the output we check */
	if (!have_opcache)
		return 0;
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (mkdir(path, 0755) < 0)
		return -errno;
	snprintf(cache_arg, PATH_MAX + 32, "opcache.file_cache=%s", path);
	static const char *const fixed[] = { "-d", "opcache.enable=1", "-d", "opcache.enable_cli=1",
					     "-d", "opcache.file_cache_only=1", "-d",
					     "opcache.validate_timestamps=0", "-d" };
	for (size_t i = 0; i < ARRAY_SIZE(fixed); i++)
		args[(*n)++] = fixed[i];
	args[(*n)++] = cache_arg;
	return 0;
}

static int free_port(void)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int port = -EADDRNOTAVAIL;
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&addr, &len) == 0)
		port = ntohs(addr.sin_port);
	close(fd);
	return port;
}

/* One GET over a fresh connection; the whole response (malloc'd) or NULL
 * when nobody listens yet. */
static char *http_get(int port, const char *path, int *err)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	*err = 0;
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		if (errno != ECONNREFUSED)
			*err = -errno;
		close(fd);
		return NULL;
	}
	struct timeval tv = { RESPONSE_TIMEOUT_MS / 1000, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	char request[1024];
	int n = snprintf(request, sizeof(request),
			 "GET %s HTTP/1.0\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n", path,
			 port);
	char *body = NULL;
	size_t len = 0, cap = 0;
	if (write(fd, request, (size_t)n) != n) {
		*err = -EIO;
		goto out;
	}
	for (;;) {
		if (cap - len < 65537) {
			cap = cap ? cap * 2 : 262144;
			char *grown = realloc(body, cap);
			if (!grown) {
				*err = -ENOMEM;
				goto out;
			}
			body = grown;
		}
		ssize_t got = read(fd, body + len, cap - len - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			*err = -errno;
			goto out;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	body[len] = '\0';
	close(fd);
	if (len == 0) {
		*err = -EPROTO;
		free(body);
		return NULL;
	}
	return body;
out:
	close(fd);
	free(body);
	return NULL;
}

/* Why a response is not the page, or NULL. */
static const char *bad_response(const char *response, char *why, size_t len)
{
	int status = 0;
	if (sscanf(response, "HTTP/%*d.%*d %d", &status) != 1) {
		snprintf(why, len, "no HTTP status line: %.80s", response);
		return why;
	}
	const char *marker = find_error(response);
	if (marker) {
		snprintf(why, len, "status %d and a PHP or database error in the page: %.200s", status,
			 marker);
		return why;
	}
	if (status == 200 && !strstr(response, "</html>")) {
		snprintf(why, len, "status 200 but no whole HTML page (%zu bytes)", strlen(response));
		return why;
	}
	if (status != 200 && (status < 300 || status > 399)) {
		snprintf(why, len, "status %d", status);
		return why;
	}
	return NULL;
}

static int measure_http(struct suite_ctx *ctx, const char *site)
{
	char cache_arg[PATH_MAX + 32], listen[64], router[PATH_MAX + 32], log[PATH_MAX + 32],
		why[320];
	const char *argv[32];
	size_t n = 0;
	argv[n++] = suite_artifact_path(ctx, "php");
	int err = php_options(site, ".opcache-http", cache_arg, argv, &n);
	if (err)
		return err;
	int port = free_port();
	if (port < 0)
		return port;
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	snprintf(router, sizeof(router), "%s/router.php", site);
	snprintf(log, sizeof(log), "%s.server.log", site);
	argv[n++] = "-S";
	argv[n++] = listen;
	argv[n++] = "-t";
	argv[n++] = site;
	argv[n++] = router;
	argv[n] = NULL;
	struct app_command cmd = { .argv = argv, .cwd = site, .log_path = log, .profiled = true,
				   .launched = true };
	pid_t pid;
	double t0 = app_now_ms();
	err = app_spawn(ctx, &cmd, &pid);
	if (err)
		return err;
	char *response = NULL;
	int status;
	for (;;) {
		response = http_get(port, suite_option(ctx, "url-path"), &err);
		if (response || err)
			break;
		if (suite_interrupted()) {
			err = -EINTR;
			break;
		}
		if (!app_running(pid, &status)) {
			char text[96];
			fprintf(stderr, "krunner: wordpress: php -S ended before it answered (%s)\n",
				app_status_text(status, text, sizeof(text)));
			app_print_log_tail(log, 10);
			pid = 0;
			err = -ECHILD;
			break;
		}
		if (app_now_ms() - t0 > RESPONSE_TIMEOUT_MS) {
			fprintf(stderr, "krunner: wordpress: no HTTP response from php -S on %s "
				"within %d s\n", listen, RESPONSE_TIMEOUT_MS / 1000);
			err = -ETIMEDOUT;
			break;
		}
		struct timespec ts = { 0, 2 * 1000000 };
		nanosleep(&ts, NULL);
	}
	double ms = app_now_ms() - t0;
	if (response && !suite_interrupted()) {
		struct timespec ts = { 0, PROFILE_FLUSH_WAIT_MS * 1000000L };
		nanosleep(&ts, NULL);
	}
	app_stop(pid, 0, SERVER_STOP_MS);
	if (err) {
		if (err != -EINTR && err != -ECHILD && err != -ETIMEDOUT)
			fprintf(stderr, "krunner: wordpress: GET %s from %s: %s\n",
				suite_option(ctx, "url-path"), listen, strerror(-err));
		return err;
	}
	if (bad_response(response, why, sizeof(why))) {
		fprintf(stderr, "krunner: wordpress: the first response is not the page: %s\n", why);
		app_print_log_tail(log, 5);
		free(response);
		return -EPROTO;
	}
	free(response);
	return suite_metric(ctx, "http_first_response_ms", ms);
}

static int measure_cli(struct suite_ctx *ctx, const char *site)
{
	char cache_arg[PATH_MAX + 32], code[PATH_MAX + 64];
	const char *argv[32];
	size_t n = 0;
	argv[n++] = suite_artifact_path(ctx, "php");
	int err = php_options(site, ".opcache-cli", cache_arg, argv, &n);
	if (err)
		return err;
	snprintf(code, sizeof(code), "require '%s/wp-load.php'; echo \"wp-load ok\\n\";", site);
	argv[n++] = "-r";
	argv[n++] = code;
	argv[n] = NULL;
	struct app_command cmd = { .argv = argv, .cwd = site, .profiled = true, .launched = true,
				   .timeout_ms = PHP_TIMEOUT_MS };
	int status;
	double ms;
	char *out = NULL, text[96];
	err = app_run(ctx, &cmd, &status, &ms, &out);
	if (err)
		return err;
	const char *marker = find_error(out);
	if (!app_exited_ok(status) || marker || !strstr(out, "wp-load ok")) {
		fprintf(stderr, "krunner: wordpress: php requiring wp-load.php failed (%s): %.300s\n",
			app_status_text(status, text, sizeof(text)), marker ? marker : out);
		free(out);
		return -EPROTO;
	}
	free(out);
	return suite_metric(ctx, "cli_require_ms", ms);
}

static int round_wordpress(struct suite_ctx *ctx)
{
	snprintf(round_dir, sizeof(round_dir), "%s/round.XXXXXX", suite_scratch_dir(ctx));
	if (!mkdtemp(round_dir))
		return -errno;
	char site[PATH_MAX];
	snprintf(site, sizeof(site), "%s/wordpress", round_dir);
	int err = make_site(ctx, site, true);
	if (!err)
		err = measure_http(ctx, site);
	if (!err)
		err = measure_cli(ctx, site);
	app_remove_tree(round_dir);
	round_dir[0] = '\0';
	return err;
}

static void teardown_wordpress(struct suite_ctx *ctx)
{
	mariadb_server_destroy(ctx, &server);
	app_remove_tree(round_dir);
}

static const struct suite wordpress = {
	.name = "wordpress",
	.description = "WordPress on php -S with a private mariadbd: first HTTP response, CLI wp-load",
	SUITE_TABLES(metrics, artifacts, options),
	.default_rounds = SUITE_APP_ROUNDS,
	.warmup_rounds = 1,
	.setup = setup_wordpress,
	.round = round_wordpress,
	.teardown = teardown_wordpress,
};

SUITE_REGISTER(wordpress)
