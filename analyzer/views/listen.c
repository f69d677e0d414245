/* SPDX-License-Identifier: MIT */
/*
 * kanalyze --listen: the live merge of many producers over a unix socket.
 * One poll loop: the listening socket, a signalfd for SIGINT/SIGTERM and
 * the connections. A connection's bytes go to its own decoder (so a
 * producer that dies mid-record loses only that record: the decoder
 * reports it as a truncated record when the connection ends) and, with
 * --save, to a file of its own that kanalyze can read again later.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "listen.h"
#include "live_view.h"
#include "metrics.h"
#include "views.h"
#include "record_reader.h"

#define MAX_CONNECTIONS 1000
#define READ_BYTES 65536

struct connection {
	int fd;
	int save_fd;
	uint64_t number;
	pid_t pid;
	struct kp_reader *reader;
	char name[96];
	bool saw_bytes;
};

struct listener {
	struct ka_model *m;
	const struct ka_listen_opts *o;
	struct connection *conns;
	size_t n_conns;
	uint64_t accepted;
	size_t printed_damage;
	uint64_t start_ns;
	struct ka_live_view *view;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void print_damage(struct listener *l)
{
	for (; l->printed_damage < l->m->n_damaged; l->printed_damage++)
		ka_print_damage(stderr, &l->m->damaged[l->printed_damage]);
}

/* A socket left by a listener that is gone may be replaced; a live one not. */
static int bind_socket(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "kanalyze: --listen: socket path too long: %s\n", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(probe);
			close(fd);
			fprintf(stderr, "kanalyze: --listen: another listener is using %s\n", path);
			return -EADDRINUSE;
		}
		if (probe >= 0)
			close(probe);
		unlink(path);
	}
	/*
	 * Bound and listening under a name of its own first, then renamed
	 * into place: a producer that finds the path can connect (a socket
	 * bound but not yet listening refuses it), when the path leaves room.
	 */
	struct sockaddr_un tmp = sa;
	bool renamed = snprintf(tmp.sun_path, sizeof(tmp.sun_path), "%s.%d", path,
				(int)getpid()) < (int)sizeof(tmp.sun_path);
	if (renamed)
		unlink(tmp.sun_path);
	/* 0600 whatever the umask: only this user's producers may connect */
	mode_t old_umask = umask(0177);
	int bound = bind(fd, (struct sockaddr *)(renamed ? &tmp : &sa), sizeof(sa));
	umask(old_umask);
	if (bound < 0 || listen(fd, 128) < 0 || (renamed && rename(tmp.sun_path, path) < 0)) {
		int err = -errno;
		fprintf(stderr, "kanalyze: --listen: cannot listen on %s: %s\n", path,
			strerror(-err));
		if (renamed && bound == 0)
			unlink(tmp.sun_path);
		close(fd);
		return err;
	}
	return fd;
}

static int open_save_file(struct listener *l, struct connection *c, bool gzip)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/conn-%04" PRIu64 "-pid%d.msgpack%s",
		 l->o->save_dir, c->number, (int)c->pid, gzip ? ".gz" : "");
	c->save_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (c->save_fd < 0) {
		fprintf(stderr, "kanalyze: --save: cannot create %s: %s\n", path,
			strerror(errno));
		return -errno;
	}
	return 0;
}

static void save_bytes(struct connection *c, const char *buf, size_t n)
{
	while (c->save_fd >= 0 && n) {
		ssize_t w = write(c->save_fd, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fprintf(stderr, "kanalyze: --save: write failed for %s: %s\n",
				c->name, strerror(errno));
			close(c->save_fd);
			c->save_fd = -1;
			return;
		}
		buf += w;
		n -= (size_t)w;
	}
}

static int accept_one(struct listener *l, int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return errno == EAGAIN || errno == EINTR || errno == ECONNABORTED ?
			       0 : -errno;
	if (l->n_conns >= MAX_CONNECTIONS) {
		fprintf(stderr, "kanalyze: --listen: more than %d producers at once; "
			"refusing one\n", MAX_CONNECTIONS);
		close(fd);
		return 0;
	}
	struct connection *c = &l->conns[l->n_conns];
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->save_fd = -1;
	c->number = ++l->accepted;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
		c->pid = cred.pid;
	snprintf(c->name, sizeof(c->name), "connection %" PRIu64 " (pid %d)",
		 c->number, (int)c->pid);
	struct kp_reader_ops ops = { .on_record = ka_model_on_record,
				     .on_damage = ka_model_on_damage,
				     .ctx = l->m };
	int err = kp_reader_new(&c->reader, c->name, &ops);
	if (err) {
		close(fd);
		return err;
	}
	l->n_conns++;
	return 0;
}

/*
 * still_open: the producer had not closed the connection when listening
 * ended, so its streams are cut, not ended: it is still running.
 */
static void close_connection(struct listener *l, size_t i, bool still_open)
{
	struct connection *c = &l->conns[i];
	int err = kp_reader_finish(c->reader);
	if (!err && !kp_reader_records(c->reader) && !kp_reader_damaged(c->reader)) {
		if (still_open) {
			fprintf(stderr, "kanalyze: %s: nothing received before kanalyze stopped "
				"listening (the producer is still running and has not "
				"flushed yet)\n", c->name);
			l->m->silent_live++;
		} else {
			err = ka_model_note_empty(l->m, c->name, "empty stream: the producer "
						  "closed the connection without sending a "
						  "record (killed before its first flush, or "
						  "it could not write)");
		}
	} else if (!err && still_open) {
		err = ka_model_note_live(l->m, c->name);
	}
	if (err == -ENOMEM)
		fprintf(stderr, "kanalyze: %s: out of memory\n", c->name);
	kp_reader_free(c->reader);
	close(c->fd);
	if (c->save_fd >= 0)
		close(c->save_fd);
	l->m->files++;
	l->conns[i] = l->conns[--l->n_conns];
}

/* 0 = go on, 1 = the connection ended, -ENOMEM. */
static int read_connection(struct listener *l, struct connection *c)
{
	static char buf[READ_BYTES];
	for (;;) {
		ssize_t n = read(c->fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0)
			return 1;
		if (l->o->save_dir && !c->saw_bytes)
			open_save_file(l, c, n >= 2 && (unsigned char)buf[0] == 0x1f &&
						     (unsigned char)buf[1] == 0x8b);
		c->saw_bytes = true;
		save_bytes(c, buf, (size_t)n);
		int err = kp_reader_feed(c->reader, buf, (size_t)n);
		if (err == -ENOMEM)
			return err;
	}
}

static void snapshot(struct listener *l, bool tty, bool measure)
{
	ka_model_sort_streams(l->m);
	ka_model_count_aside(l->m);
	double secs = (double)(now_ns() - l->start_ns) / 1e9;
	char title[512];
	snprintf(title, sizeof(title), "--- kanalyze --listen %s: %.1f s, %zu producer(s) "
		 "connected, %" PRIu64 " so far ---", l->o->address, secs, l->n_conns,
		 l->accepted);
	ka_live_view_print(l->view, stdout, l->m, l->o->report, title, tty, measure);
}

int ka_listen(struct ka_model *m, const struct ka_listen_opts *o,
	      uint64_t *connections)
{
	const char *path = strncmp(o->address, "unix:", 5) == 0 ? o->address + 5 :
								  o->address;
	struct listener l = { .m = m, .o = o, .start_ns = now_ns() };
	int err = 0, lfd, sfd;

	*connections = 0;
	if (o->save_dir && mkdir(o->save_dir, 0700) < 0 && errno != EEXIST) {
		fprintf(stderr, "kanalyze: --save: cannot create %s: %s\n",
			o->save_dir, strerror(errno));
		return -errno;
	}
	l.conns = calloc(MAX_CONNECTIONS, sizeof(*l.conns));
	if (!l.conns)
		return -ENOMEM;
	struct pollfd *pfd = calloc(MAX_CONNECTIONS + 4, sizeof(*pfd));
	if (!pfd) {
		err = -ENOMEM;
		goto out_conns;
	}
	sigset_t mask, old;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, &old);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		err = -errno;
		goto out_mask;
	}
	lfd = bind_socket(path);
	if (lfd < 0) {
		err = lfd;
		goto out_signal;
	}
	fprintf(stderr, "kanalyze: listening on unix:%s (Ctrl-C ends and prints "
		"the profile)\n", path);
	int mfd = -1;
	if (o->metrics) {
		char bound[80];
		mfd = ka_metrics_open(o->metrics, bound, sizeof(bound));
		if (mfd < 0) {
			err = mfd;
			close(lfd);
			unlink(path);
			goto out_signal;
		}
		fprintf(stderr, "kanalyze: metrics on http://%s/metrics\n", bound);
	}

	bool tty = o->report->format == KA_FORMAT_TABLE && isatty(STDOUT_FILENO);
	bool snapshots = o->refresh_ms && o->report->format == KA_FORMAT_TABLE;
	l.view = ka_live_view_new(tty && snapshots);
	if (!l.view) {
		err = -ENOMEM;
		goto out_socket;
	}
	int key_fd = ka_live_view_key_fd(l.view);
	uint64_t next_snapshot = now_ns() + o->refresh_ms * 1000000ull;
	uint64_t last_close = 0;
	for (;;) {
		uint64_t now = now_ns();
		if (l.accepted && !l.n_conns && mfd < 0 &&
		    now >= last_close + o->linger_ms * 1000000ull)
			break;
		if (snapshots && now >= next_snapshot && l.accepted) {
			snapshot(&l, tty, true);
			next_snapshot = now + o->refresh_ms * 1000000ull;
		}
		int64_t wait_ms = -1;
		if (snapshots)
			wait_ms = next_snapshot > now ? (int64_t)((next_snapshot - now) / 1000000) + 1 : 0;
		if (l.accepted && !l.n_conns && mfd < 0) {
			int64_t w = (int64_t)((last_close + o->linger_ms * 1000000ull - now) / 1000000) + 1;
			if (wait_ms < 0 || w < wait_ms)
				wait_ms = w;
		}
		pfd[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		for (size_t i = 0; i < l.n_conns; i++)
			pfd[i + 2] = (struct pollfd){ .fd = l.conns[i].fd, .events = POLLIN };
		size_t polled = l.n_conns;
		/* last: a key changes the order of the next drawing at once */
		pfd[polled + 2] = (struct pollfd){ .fd = key_fd, .events = POLLIN };
		pfd[polled + 3] = (struct pollfd){ .fd = mfd, .events = POLLIN };
		int n = poll(pfd, polled + 4, (int)(wait_ms > 60000 ? 60000 : wait_ms));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (pfd[1].revents) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof(si)) > 0)
				fprintf(stderr, "kanalyze: %s: ending with %zu producer(s) "
					"still connected\n", strsignal((int)si.ssi_signo),
					l.n_conns);
			break;
		}
		/* Connections first, from the end: closing moves the last one. */
		for (size_t i = polled; i-- > 0;) {
			if (!pfd[i + 2].revents)
				continue;
			int r = read_connection(&l, &l.conns[i]);
			if (r < 0) {
				err = r;
				goto done;
			}
			if (r == 1) {
				close_connection(&l, i, false);
				last_close = now_ns();
			}
		}
		if (pfd[0].revents && (err = accept_one(&l, lfd)))
			break;
		if (pfd[polled + 2].revents && ka_live_view_keys(l.view) && l.accepted)
			snapshot(&l, tty, false);
		if (pfd[polled + 3].revents)
			ka_metrics_serve(mfd, l.m, (unsigned)l.n_conns);
		print_damage(&l);
	}
done:
	/* Whatever is buffered of producers still connected is decoded. */
	while (l.n_conns) {
		int r = read_connection(&l, &l.conns[l.n_conns - 1]);
		close_connection(&l, l.n_conns - 1, r != 1);
	}
	print_damage(&l);
	*connections = l.accepted;
out_socket:
	ka_live_view_free(l.view);
	if (mfd >= 0)
		close(mfd);
	close(lfd);
	unlink(path);
	if (err)
		fprintf(stderr, "kanalyze: --listen: %s\n", strerror(-err));
out_signal:
	close(sfd);
out_mask:
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(pfd);
out_conns:
	free(l.conns);
	return err;
}
