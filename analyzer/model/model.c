/* SPDX-License-Identifier: MIT */
/*
 * The model: its streams (found by pid and stream id), the damage and the
 * sources read, how streams end (exit, exec, fork notes), the lifecycle
 * and `own` records, each record handed to its reader (model_records.c),
 * and the queries the views ask of the whole.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_internal.h"
#include "syscalls.h"


void ka_model_init(struct ka_model *m)
{
	memset(m, 0, sizeof(*m));
}

void ka_sc_free(struct ka_sc_stats *sc)
{
	free(sc->errnos);
	free(sc->hist);
	free(sc->sites);
	for (size_t k = 0; k < sc->n_stacks; k++)
		free(sc->stacks[k].pcs);
	free(sc->stacks);
	sc->errnos = NULL;
	sc->hist = NULL;
	sc->sites = NULL;
	sc->stacks = NULL;
	sc->n_errnos = sc->n_hist = sc->n_sites = sc->n_stacks = 0;
}

void ka_thread_clear_stats(struct ka_thread *t)
{
	for (size_t i = 0; i < t->n_sc; i++)
		ka_sc_free(&t->sc[i]);
	free(t->sc);
	t->sc = NULL;
	t->n_sc = 0;
}

void ka_stream_free_header(struct ka_stream *s)
{
	free(s->producer);
	free(s->origin);
	free(s->exe);
	free(s->exec_path);
	free(s->arch);
	free(s->host);
	free(s->kernel);
	free(s->coverage);
	free(s->hook_mode);
	free(s->up_exe);
	s->up_exe = NULL;
	s->up_pid = 0;
	free(s->site_cache_note);
	s->site_cache_note = NULL;
	free(s->own);
	free(s->own_startup);
	free(s->dispatch_sites);
	s->dispatch_sites = NULL;
	s->n_dispatch_sites = 0;
	free(s->in_progress);
	s->in_progress = NULL;
	s->n_in_progress = 0;
	s->hook_mode = NULL;
	s->own = NULL;
	s->n_own = 0;
	s->own_startup = NULL;
	s->n_own_startup = 0;
	for (size_t i = 0; i < s->argc; i++)
		free(s->argv[i]);
	free(s->argv);
	s->producer = s->origin = s->exe = s->exec_path = s->arch = NULL;
	s->host = s->kernel = s->coverage = NULL;
	s->argv = NULL;
	s->argc = 0;
}

void ka_thread_free_stats(struct ka_thread *t)
{
	ka_thread_clear_stats(t);
}

static void stream_free(struct ka_stream *s);

void ka_model_free(struct ka_model *m)
{
	for (size_t i = 0; i < m->n_streams; i++)
		stream_free(&m->streams[i]);
	free(m->streams);
	for (size_t i = 0; i < m->n_history; i++)
		free(m->history[i].sc);
	free(m->history);
	free(m->index);
	for (size_t i = 0; i < m->n_drop_reasons; i++)
		free(m->drop_reasons[i]);
	free(m->drop_reasons);
	for (size_t i = 0; i < m->n_damaged; i++) {
		free(m->damaged[i].file);
		free(m->damaged[i].reason);
	}
	free(m->damaged);
	for (size_t i = 0; i < m->n_sources; i++)
		free(m->sources[i].name);
	free(m->sources);
	free(m->source_index);
	free(m->forks);
	memset(m, 0, sizeof(*m));
}

static void stream_free(struct ka_stream *s)
{
	ka_stream_free_header(s);
	for (size_t t = 0; t < s->n_threads; t++)
		ka_thread_clear_stats(&s->threads[t]);
	free(s->threads);
	for (size_t k = 0; k < s->n_maps; k++) {
		free(s->maps[k].path);
		free(s->maps[k].build_id);
	}
	free(s->maps);
	free(s->seq);
	free(s->event_list);
	ka_lanes_free(&s->lanes);
	free(s->empty_file);
}

/* Grows *array (of *cap elements of size elem) to hold at least need. */
int ka_grow(void **array, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap * 2 : 8;
	while (n < need)
		n *= 2;
	void *p = reallocarray(*array, n, elem);
	if (!p)
		return -ENOMEM;
	*array = p;
	*cap = n;
	return 0;
}

/* Appends a copy of *e (its strings copied). */
static int add_damage_entry(struct ka_model *m, const struct ka_damage_entry *e)
{
	void *p = reallocarray(m->damaged, m->n_damaged + 1, sizeof(*m->damaged));
	if (!p)
		return -ENOMEM;
	m->damaged = p;
	struct ka_damage_entry *d = &m->damaged[m->n_damaged];
	*d = *e;
	d->file = strdup(e->file);
	d->reason = strdup(e->reason);
	if (!d->file || !d->reason) {
		free(d->file);
		free(d->reason);
		return -ENOMEM;
	}
	m->n_damaged++;
	return 0;
}

static int add_damage(struct ka_model *m, const char *file, uint64_t offset,
		      bool decompressed, const char *reason)
{
	return add_damage_entry(m, &(struct ka_damage_entry){
		.file = (char *)file, .offset = offset,
		.decompressed = decompressed, .reason = (char *)reason });
}

void ka_model_on_damage(const struct kp_damage *damage, void *model)
{
	/* Out of memory here only loses the message; the reader's own
	 * damaged flag still makes the exit status 2. */
	(void)add_damage(model, damage->source, damage->offset,
			 damage->decompressed, damage->reason);
}

/* ---- stream index ---- */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static uint64_t stream_hash(uint64_t pid, uint64_t stream)
{
	return mix64(pid * 0x9e3779b97f4a7c15ULL ^ stream);
}

static int index_rebuild(struct ka_model *m, size_t size)
{
	uint64_t *index = calloc(size, sizeof(*index));
	if (!index)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_streams; i++) {
		size_t h = stream_hash(m->streams[i].pid, m->streams[i].stream) &
			   (size - 1);
		while (index[h])
			h = (h + 1) & (size - 1);
		index[h] = i + 1;
	}
	free(m->index);
	m->index = index;
	m->index_size = size;
	return 0;
}

int ka_stream_get(struct ka_model *m, uint64_t pid, uint64_t id,
		      struct ka_stream **out)
{
	if (m->index_size) {
		size_t h = stream_hash(pid, id) & (m->index_size - 1);
		while (m->index[h]) {
			struct ka_stream *s = &m->streams[m->index[h] - 1];
			if (s->pid == pid && s->stream == id) {
				*out = s;
				return 0;
			}
			h = (h + 1) & (m->index_size - 1);
		}
	}
	int err = ka_grow((void **)&m->streams, &m->cap_streams,
		       m->n_streams + 1, sizeof(*m->streams));
	if (err)
		return err;
	struct ka_stream *s = &m->streams[m->n_streams++];
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->stream = id;
	s->exit_status = -1;
	if (m->n_streams * 2 > m->index_size) {
		err = index_rebuild(m, m->index_size ? m->index_size * 2 : 64);
		if (err) {
			m->n_streams--;
			return err;
		}
	} else {
		size_t h = stream_hash(pid, id) & (m->index_size - 1);
		while (m->index[h])
			h = (h + 1) & (m->index_size - 1);
		m->index[h] = m->n_streams;
	}
	*out = s;
	return 0;
}

static uint64_t name_hash(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 0x100000001b3ULL;
	return mix64(h);
}

static int sources_rehash(struct ka_model *m, size_t size)
{
	uint64_t *index = calloc(size, sizeof(*index));
	if (!index)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_sources; i++) {
		size_t h = name_hash(m->sources[i].name) & (size - 1);
		while (index[h])
			h = (h + 1) & (size - 1);
		index[h] = i + 1;
	}
	free(m->source_index);
	m->source_index = index;
	m->source_index_size = size;
	return 0;
}

/*
 * The index of the input named source in m->sources. Records of a file
 * come together, so the last one found is tried first; --listen
 * connections interleave, hence the hash table.
 */
static int source_index(struct ka_model *m, const char *source, size_t *out)
{
	if (m->n_sources && strcmp(m->sources[m->last_source].name, source) == 0) {
		*out = m->last_source;
		return 0;
	}
	size_t h = 0;
	if (m->source_index_size) {
		h = name_hash(source) & (m->source_index_size - 1);
		for (; m->source_index[h]; h = (h + 1) & (m->source_index_size - 1)) {
			size_t i = m->source_index[h] - 1;
			if (strcmp(m->sources[i].name, source) == 0) {
				*out = m->last_source = i;
				return 0;
			}
		}
	}
	int err = ka_grow((void **)&m->sources, &m->cap_sources, m->n_sources + 1,
		       sizeof(*m->sources));
	if (err)
		return err;
	struct ka_source *src = &m->sources[m->n_sources];
	src->live = false;
	if (!(src->name = strdup(source)))
		return -ENOMEM;
	m->n_sources++;
	if (m->n_sources * 2 > m->source_index_size) {
		if ((err = sources_rehash(m, m->source_index_size ?
						   m->source_index_size * 2 : 64))) {
			free(src->name);
			m->n_sources--;
			return err;
		}
	} else {
		m->source_index[h] = m->n_sources;
	}
	*out = m->last_source = m->n_sources - 1;
	return 0;
}

/*
 * Notes where the record ends when it is its stream's last so far, what it
 * says about the stream's end (an exec, calls after it), and its record
 * number; 0 or -ENOMEM.
 */
static int stream_note(struct ka_model *m, const struct kp_record *rec)
{
	uint64_t pid, id, seq = 0;
	if (kp_get_uint(rec->map, "pid", &pid) || kp_get_uint(rec->map, "stream", &id))
		return 0;
	if (kp_get_uint(rec->map, "seq", &seq))
		seq = 0;
	struct ka_stream *s;
	int err = ka_stream_get(m, pid, id, &s);
	if (err)
		return err;
	uint64_t key = seq ? seq : m->records;
	if (key >= s->last_key) {
		size_t src;
		if ((err = source_index(m, rec->source, &src)))
			return err;
		s->last_key = key;
		s->last_end = rec->offset + rec->size;
		s->last_source = src;
		s->last_decompressed = rec->decompressed;
	}
	if (strcmp(rec->type, KP_REC_EXEC) == 0) {
		if (key > s->exec_key)
			s->exec_key = key;
	} else if (strcmp(rec->type, KP_REC_AGGREGATE) == 0 || strcmp(rec->type, KP_REC_EVENTS) == 0 ||
		   strcmp(rec->type, KP_REC_FORK) == 0) {
		if (key > s->activity_key)
			s->activity_key = key;
	}
	if (!seq)
		return 0;
	/* Usually the next number: extend the last range. */
	size_t i = s->n_seq;
	while (i > 0 && s->seq[i - 1].first > seq)
		i--;
	if (i > 0 && seq <= s->seq[i - 1].last) {
		s->seq_duplicates++;
		return 0;
	}
	bool join_prev = i > 0 && s->seq[i - 1].last + 1 == seq;
	bool join_next = i < s->n_seq && s->seq[i].first == seq + 1;
	if (join_prev && join_next) {
		s->seq[i - 1].last = s->seq[i].last;
		memmove(&s->seq[i], &s->seq[i + 1], (s->n_seq - i - 1) * sizeof(*s->seq));
		s->n_seq--;
	} else if (join_prev) {
		s->seq[i - 1].last = seq;
	} else if (join_next) {
		s->seq[i].first = seq;
	} else {
		if ((err = ka_grow((void **)&s->seq, &s->cap_seq, s->n_seq + 1,
				sizeof(*s->seq))))
			return err;
		memmove(&s->seq[i + 1], &s->seq[i], (s->n_seq - i) * sizeof(*s->seq));
		s->seq[i].first = s->seq[i].last = seq;
		s->n_seq++;
	}
	return 0;
}

uint64_t ka_stream_missing(const struct ka_stream *s,
			   struct ka_seq_range *holes, size_t max_holes,
			   size_t *n_holes)
{
	uint64_t missing = 0, next = 1;
	size_t n = 0;
	for (size_t i = 0; i < s->n_seq; i++) {
		if (s->seq[i].first > next) {
			missing += s->seq[i].first - next;
			if (holes && n < max_holes)
				holes[n] = (struct ka_seq_range){ next, s->seq[i].first - 1 };
			n++;
		}
		next = s->seq[i].last + 1;
	}
	if (n_holes)
		*n_holes = n;
	return missing;
}

void ka_model_remove_stream(struct ka_model *m, size_t i)
{
	stream_free(&m->streams[i]);
	memmove(&m->streams[i], &m->streams[i + 1],
		(m->n_streams - i - 1) * sizeof(*m->streams));
	m->n_streams--;
	if (m->index_size && index_rebuild(m, m->index_size)) {
		free(m->index);
		m->index = NULL;
		m->index_size = 0;
	}
}

struct ka_stream *ka_model_find(struct ka_model *m, uint64_t pid, uint64_t id)
{
	for (size_t i = 0; i < m->n_streams; i++)
		if (m->streams[i].pid == pid && m->streams[i].stream == id)
			return &m->streams[i];
	return NULL;
}

/* ---- how streams end ---- */

/*
 * EXE.PID.N.msgpack[.gz], the shim's and kbpf-trace's name of a file in a
 * trace directory: *pid. false for any other name.
 */
static bool pid_of_file_name(const char *path, uint64_t *pid)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	if (n > 11 && strcmp(base + n - 11, ".msgpack.gz") == 0)
		n -= 11;
	else if (n > 8 && strcmp(base + n - 8, ".msgpack") == 0)
		n -= 8;
	else
		return false;
	/* backwards: digits of N, '.', digits of PID, '.', a non-empty EXE */
	size_t i = n, digits = 0;
	while (i > 0 && base[i - 1] >= '0' && base[i - 1] <= '9')
		i--, digits++;
	if (!digits || i == 0 || base[--i] != '.')
		return false;
	size_t pid_end = i;
	digits = 0;
	while (i > 0 && base[i - 1] >= '0' && base[i - 1] <= '9')
		i--, digits++;
	if (!digits || digits > 10 || i < 2 || base[i - 1] != '.')
		return false;
	uint64_t v = 0;
	for (size_t k = i; k < pid_end; k++)
		v = v * 10 + (uint64_t)(base[k] - '0');
	if (!v || v > INT_MAX)
		return false;
	*pid = v;
	return true;
}

int ka_model_note_empty(struct ka_model *m, const char *source, const char *reason)
{
	int err = add_damage_entry(m, &(struct ka_damage_entry){
		.file = (char *)source, .no_start = true, .whole_input = true,
		.reason = (char *)reason });
	uint64_t pid;
	if (err || !pid_of_file_name(source, &pid))
		return err;
	/* stream id 0: unknown, the header never made it */
	struct ka_stream *s;
	if ((err = ka_stream_get(m, pid, 0, &s)))
		return err;
	if (!s->empty_file && !(s->empty_file = strdup(source)))
		return -ENOMEM;
	return 0;
}

int ka_model_note_foreign(struct ka_model *m, size_t since, const char *source,
			  bool decompressed, const char *reason)
{
	for (size_t i = since; i < m->n_damaged; i++) {
		free(m->damaged[i].file);
		free(m->damaged[i].reason);
	}
	if (since < m->n_damaged)
		m->n_damaged = since;
	return add_damage_entry(m, &(struct ka_damage_entry){
		.file = (char *)source, .decompressed = decompressed,
		.no_start = true, .whole_input = true, .reason = (char *)reason });
}

int ka_model_note_damage_summary(struct ka_model *m, const char *source,
				 uint64_t offset, bool decompressed, uint64_t more)
{
	char why[160];
	snprintf(why, sizeof(why), "%" PRIu64 " more damaged record%s after byte %" PRIu64
		 "%s (not listed)", more, more == 1 ? "" : "s", offset,
		 decompressed ? " of the decompressed stream" : "");
	return add_damage_entry(m, &(struct ka_damage_entry){
		.file = (char *)source, .offset = offset, .decompressed = decompressed,
		.whole_input = true, .reason = why });
}

int ka_model_note_live(struct ka_model *m, const char *source)
{
	for (size_t i = 0; i < m->n_sources; i++)
		if (strcmp(m->sources[i].name, source) == 0)
			m->sources[i].live = true;
	return 0;
}

bool ka_stream_ended(const struct ka_stream *s)
{
	return s->have_exit || (s->exec_path && s->exec_key > s->activity_key);
}

bool ka_stream_unended(const struct ka_stream *s)
{
	return !ka_stream_ended(s) && !s->empty_file;
}

bool ka_model_has_pid(const struct ka_model *m, uint64_t pid)
{
	for (size_t i = 0; i < m->n_streams; i++)
		if (m->streams[i].pid == pid)
			return true;
	return false;
}

bool ka_model_exec_orphan(const struct ka_model *m, const struct ka_stream *s)
{
	/* the whole traced tree only, as for forks; kbpf-trace's streams
	 * go on through an exec */
	if ((!m->forks_checked && !s->exec_why[0]) || !s->exec_path || s->have_exit ||
	    s->exec_key <= s->activity_key || (s->producer && strcmp(s->producer, "bpf") == 0))
		return false;
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *t = &m->streams[i];
		if (t != s && t->pid == s->pid && t->parent_stream == s->stream)
			return false;
		/* an empty trace file of the pid: the new image was killed
		 * before its header, which that file's message says already
		 * (an image that exec'd wrote its exec record: not empty) */
		if (t != s && t->pid == s->pid && t->empty_file)
			return false;
	}
	return true;
}

bool ka_model_fork_orphan(const struct ka_model *m, const struct ka_fork_note *f)
{
	/* a filter (--pid) that left the parent out leaves its children out;
	 * a child the shim said it cannot enter needs no whole tree */
	return (f->orphan || (f->why[0] && !m->forks_checked && !ka_model_has_pid(m, f->child))) &&
	       ka_model_has_pid(m, f->pid);
}

static int u64_order(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int ka_model_check_forks(struct ka_model *m)
{
	bool whole = m->whole_tree;
	/* kbpf-trace follows the whole tree into its output */
	for (size_t i = 0; !whole && i < m->n_streams; i++)
		whole = m->streams[i].producer && strcmp(m->streams[i].producer, "bpf") == 0;
	m->forks_checked = whole;
	if (!whole || !m->n_forks)
		return 0;
	uint64_t *pids = calloc(m->n_streams + 1, sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_streams; i++)
		pids[i] = m->streams[i].pid;
	qsort(pids, m->n_streams, sizeof(*pids), u64_order);
	for (size_t i = 0; i < m->n_forks; i++) {
		struct ka_fork_note *f = &m->forks[i];
		f->orphan = !bsearch(&f->child, pids, m->n_streams, sizeof(*pids), u64_order);
		/* the same record read twice (a file given twice) counts once */
		for (size_t k = 0; f->orphan && k < i; k++)
			if (m->forks[k].orphan && m->forks[k].pid == f->pid &&
			    m->forks[k].child == f->child)
				f->orphan = false;
	}
	free(pids);
	return 0;
}

/* fork and exec: only checked; the header links of the new streams
 * already say what they say. */
static int on_lifecycle(struct ka_model *m, const char *type,
			const msgpack_object *map, struct bad *bad)
{
	uint64_t u = 0, pid, id = 0;
	int err;
	if ((err = NEED_UINT(map, "pid", &pid, bad)) ||
	    (err = GET_UINT(map, "stream", &id, bad)) ||
	    (err = GET_UINT(map, "child", &u, bad)))
		return err;
	static const char *const strs[] = { "how", "path", "not_entered" };
	for (size_t i = 0; i < 3; i++) {
		const msgpack_object *o = kp_map_get(map, strs[i]);
		if (o && o->type != MSGPACK_OBJECT_STR) {
			bad->key = strs[i];
			bad->want = "string";
			return -EINVAL;
		}
	}
	if (strcmp(type, KP_REC_FORK) == 0 && u) {
		if ((err = ka_grow((void **)&m->forks, &m->cap_forks, m->n_forks + 1,
				sizeof(*m->forks))))
			return err;
		struct ka_fork_note *f = &m->forks[m->n_forks++];
		memset(f, 0, sizeof(*f));
		f->pid = pid;
		f->stream = id;
		f->child = u;
		const msgpack_object *how = kp_map_get(map, "how");
		for (uint32_t i = 0; how && i < how->via.str.size && i + 1 < sizeof(f->how); i++)
			f->how[i] = how->via.str.ptr[i] ? how->via.str.ptr[i] : '?';
		if ((err = ka_copy_name(map, "not_entered", f->why, sizeof(f->why), bad)) ||
		    (err = ka_copy_name(map, "path", f->path, sizeof(f->path), bad)))
			return err;
	}
	if (strcmp(type, KP_REC_EXEC) == 0 && id) {
		struct ka_stream *s;
		if ((err = ka_stream_get(m, pid, id, &s)))
			return err;
		if ((err = ka_get_str(map, "path", &s->exec_path, bad)) ||
		    (err = ka_copy_name(map, "not_entered", s->exec_why, sizeof(s->exec_why), bad)))
			return err;
		if (!s->exec_path && !(s->exec_path = strdup("?")))
			return -ENOMEM;
	}
	return 0;
}

/* The shim's own syscalls, cumulative: the last record of a stream wins. */
static int on_own(struct ka_model *m, const msgpack_object *map, struct bad *bad)
{
	uint64_t pid, id, startup_ns = 0;
	struct ka_pair *own = NULL, *startup = NULL;
	size_t n_own = 0, n_startup = 0;
	int err;
	uint64_t dispatch_calls = 0;
	struct ka_pair *dsites = NULL;
	size_t n_dsites = 0;
	bool dispatch = kp_map_get(map, "dispatch_calls") != NULL;
	if ((err = NEED_UINT(map, "pid", &pid, bad)) ||
	    (err = NEED_UINT(map, "stream", &id, bad)) ||
	    (err = GET_UINT(map, "startup_ns", &startup_ns, bad)) ||
	    (err = GET_UINT(map, "dispatch_calls", &dispatch_calls, bad)) ||
	    (err = ka_pairs_of(map, "syscalls", true, &own, &n_own, bad)) ||
	    (err = ka_pairs_of(map, "startup", false, &startup, &n_startup, bad)) ||
	    (err = ka_pairs_upto(map, "dispatch_sites", dispatch, UINT64_MAX, &dsites, &n_dsites,
			      bad)))
		goto fail;
	struct ka_stream *s;
	if ((err = ka_stream_get(m, pid, id, &s)))
		goto fail;
	free(s->own);
	free(s->own_startup);
	s->own = own;
	s->n_own = n_own;
	s->own_startup = startup;
	s->n_own_startup = n_startup;
	s->own_startup_ns = startup_ns;
	free(s->dispatch_sites);
	s->dispatch = dispatch;
	s->dispatch_calls = dispatch_calls;
	s->dispatch_sites = dsites;
	s->n_dispatch_sites = n_dsites;
	return 0;
fail:
	free(own);
	free(startup);
	free(dsites);
	return err;
}

int ka_model_on_record(const struct kp_record *rec, void *model)
{
	struct ka_model *m = model;
	struct bad bad = { NULL, NULL };
	int err;

	m->records++;
	/* The first record of an input starts it: a stream's header. */
	if (rec->offset == 0 && strcmp(rec->type, KP_REC_HEADER) != 0) {
		char why[160];
		snprintf(why, sizeof(why), "headerless trace: its first record is %s %s "
			 "record, not a header (the start of the stream is missing)",
			 strchr("aeiou", rec->type[0]) ? "an" : "a", rec->type);
		err = add_damage_entry(m, &(struct ka_damage_entry){
			.file = (char *)rec->source, .decompressed = rec->decompressed,
			.no_start = true, .whole_input = true, .reason = why });
		if (err)
			return err;
	}
	if (strcmp(rec->type, KP_REC_AGGREGATE) == 0)
		err = ka_on_aggregate(m, rec->map, &bad);
	else if (strcmp(rec->type, KP_REC_HEADER) == 0)
		err = ka_on_header(m, rec->map, &bad);
	else if (strcmp(rec->type, KP_REC_EXIT) == 0)
		err = ka_on_exit_record(m, rec->map, &bad);
	else if (strcmp(rec->type, KP_REC_DROP) == 0)
		err = ka_on_drop(m, rec->map, &bad);
	else if (strcmp(rec->type, KP_REC_EVENTS) == 0)
		err = ka_on_events(m, rec->map, &bad);
	else if (strcmp(rec->type, KP_REC_FORK) == 0 || strcmp(rec->type, KP_REC_EXEC) == 0)
		err = on_lifecycle(m, rec->type, rec->map, &bad);
	else if (strcmp(rec->type, KP_REC_MAPS) == 0)
		err = ka_on_maps(m, rec->map, &bad);
	else if (strcmp(rec->type, KP_REC_OWN) == 0)
		err = on_own(m, rec->map, &bad);
	else {
		m->unknown_records++;
		return stream_note(m, rec);
	}
	if (!err)
		err = stream_note(m, rec);
	if (err != -EINVAL)
		return err;
	char why[160];
	snprintf(why, sizeof(why), "malformed %s record (\"%s\" is not %s%s)",
		 rec->type, bad.key ? bad.key : "?",
		 bad.want && strchr("aeiou", bad.want[0]) ? "an " : "a ",
		 bad.want ? bad.want : "valid");
	return add_damage(m, rec->source, rec->offset, rec->decompressed, why);
}

/* ---- queries ---- */

static int stream_order(const void *a, const void *b)
{
	const struct ka_stream *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->stream != y->stream)
		return x->stream < y->stream ? -1 : 1;
	return 0;
}

static int thread_order(const void *a, const void *b)
{
	const struct ka_thread *x = a, *y = b;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

void ka_model_sort_streams(struct ka_model *m)
{
	if (m->n_streams > 1)
		qsort(m->streams, m->n_streams, sizeof(*m->streams), stream_order);
	for (size_t i = 0; i < m->n_streams; i++)
		if (m->streams[i].n_threads > 1)
			qsort(m->streams[i].threads, m->streams[i].n_threads,
			      sizeof(struct ka_thread), thread_order);
	if (m->index_size && index_rebuild(m, m->index_size)) {
		/* Without memory the index is dropped; nothing looks
		 * streams up after sorting. */
		free(m->index);
		m->index = NULL;
		m->index_size = 0;
	}
}

const char *ka_model_arch(const struct ka_model *m)
{
	for (size_t i = 0; i < m->n_streams; i++)
		if (m->streams[i].arch)
			return m->streams[i].arch;
	return kp_host_arch();
}

uint64_t ka_model_processes(const struct ka_model *m)
{
	uint64_t n = 0;
	for (size_t i = 0; i < m->n_streams; i++) {
		size_t j;
		for (j = 0; j < i; j++)
			if (m->streams[j].pid == m->streams[i].pid)
				break;
		n += j == i;
	}
	return n;
}

uint64_t ka_model_threads(const struct ka_model *m)
{
	uint64_t n = 0;
	for (size_t i = 0; i < m->n_streams; i++)
		n += m->streams[i].n_threads;
	return n;
}

const char *ka_model_producer(const struct ka_model *m)
{
	const char *p = NULL;
	for (size_t i = 0; i < m->n_streams; i++) {
		const char *q = m->streams[i].producer;
		if (!q)
			continue;
		if (p && strcmp(p, q) != 0)
			return NULL;
		p = q;
	}
	return p;
}

const char *ka_model_hook_mode(const struct ka_model *m)
{
	const char *mode = NULL;
	for (size_t i = 0; i < m->n_streams; i++) {
		const struct ka_stream *st = &m->streams[i];
		if (!st->producer || strcmp(st->producer, "preload") != 0)
			continue;
		const char *h = st->hook_mode ? st->hook_mode : "symbols";
		if (mode && strcmp(mode, h) != 0)
			return "mixed";
		mode = h;
	}
	return mode;
}

const char *ka_model_coverage(const struct ka_model *m)
{
	if (!ka_model_producer(m))
		return NULL;
	const char *mode = ka_model_hook_mode(m);
	if (mode && strcmp(mode, "mixed") == 0)
		return "mixed: some processes complete after start-up, some libc exported "
		       "functions only";
	for (size_t i = 0; i < m->n_streams; i++)
		if (m->streams[i].coverage)
			return m->streams[i].coverage;
	return NULL;
}
