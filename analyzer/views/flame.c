/* SPDX-License-Identifier: MIT */
/*
 * A flame graph drawn by kanalyze itself (--flame=FILE, and in the HTML
 * report): the folded stacks of --folded as one SVG, root at the bottom,
 * each frame as wide as its calls' time (or their number), siblings in
 * name order, as flamegraph.pl draws them. Its script zooms into a frame
 * on a click ("Reset Zoom" undoes it), searches by regular expression
 * ("Search", or kprofFlameSearch(re) from a page that holds it) with the
 * matched share of the whole, and names the frame under the pointer; as
 * flamegraph.pl's, a link can say what to show: FILE.svg?s=REGEX searches,
 * ?z=FRAME zooms into the first frame of that name.
 * Frames narrower than 0.1 pixel are left out, as flamegraph.pl does.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

#define WIDTH 1200
#define PAD 10
#define FRAME_H 16
#define TOP 40	  /* title and buttons */
#define BOTTOM 24 /* the details line */
#define CHAR_W 7.2
#define MIN_PX 0.1
#define STR_(x) #x
#define STR(x) STR_(x)

struct node {
	char *name;
	uint64_t count, time_ns;
	size_t child, next; /* index + 1; 0: none */
	unsigned depth;
	bool leaf_syscall; /* the syscall itself: the last frame of its stack */
};

struct tree {
	struct node *v;
	size_t n, cap;
	unsigned max_depth;
};

static size_t node_add(struct tree *t, const char *name, size_t len, unsigned depth)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		void *p = reallocarray(t->v, cap, sizeof(*t->v));
		if (!p)
			return 0;
		t->v = p;
		t->cap = cap;
	}
	struct node *x = &t->v[t->n];
	memset(x, 0, sizeof(*x));
	if (!(x->name = strndup(name, len)))
		return 0;
	x->depth = depth;
	if (depth > t->max_depth)
		t->max_depth = depth;
	return ++t->n;
}

/* The child of parent named name (len bytes), made when missing; the
 * children stay in name order. */
static size_t child_of(struct tree *t, size_t parent, const char *name, size_t len)
{
	for (size_t c = t->v[parent - 1].child; c; c = t->v[c - 1].next)
		if (!strncmp(t->v[c - 1].name, name, len) && !t->v[c - 1].name[len])
			return c;
	size_t id = node_add(t, name, len, t->v[parent - 1].depth + 1);
	if (!id)
		return 0;
	size_t *link = &t->v[parent - 1].child; /* t->v may have moved: now */
	while (*link && strcmp(t->v[*link - 1].name, t->v[id - 1].name) < 0)
		link = &t->v[*link - 1].next;
	t->v[id - 1].next = *link;
	*link = id;
	return id;
}

static int build(struct tree *t, const struct ka_folded_line *lines, size_t n)
{
	if (!node_add(t, "all", 3, 0))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t at = 1;
		t->v[0].count += lines[i].count;
		t->v[0].time_ns += lines[i].time_ns;
		for (const char *p = lines[i].text; *p;) {
			size_t len = strcspn(p, ";");
			if (!(at = child_of(t, at, p, len)))
				return -ENOMEM;
			t->v[at - 1].count += lines[i].count;
			t->v[at - 1].time_ns += lines[i].time_ns;
			p += len;
			if (*p == ';')
				p++;
			else
				t->v[at - 1].leaf_syscall = true;
		}
	}
	return 0;
}

static void xml_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default:
			/* no control characters in XML 1.0 */
			fputc((unsigned char)*s < 0x20 ? '?' : *s, out);
		}
	}
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* flamegraph.pl's warm colors, by name; the syscalls red, JIT code
 * (perf maps) green, the C library and the loader yellow. */
static void color(char *buf, size_t size, const struct node *x)
{
	uint32_t h = name_hash(x->name);
	unsigned a = h % 50, b = (h >> 8) % 100;
	if (x->leaf_syscall)
		snprintf(buf, size, "rgb(%u,%u,%u)", 215 + a % 40, 50 + b / 2, 40 + a / 2);
	else if (!strncmp(x->name, "perf-", 5))
		snprintf(buf, size, "rgb(%u,%u,%u)", 60 + a, 180 + a, 60 + b / 3);
	else if (!strncmp(x->name, "libc.so", 7) || !strncmp(x->name, "ld-linux", 8))
		snprintf(buf, size, "rgb(%u,%u,%u)", 220 + a / 2, 190 + a, 60 + b / 2);
	else
		snprintf(buf, size, "rgb(%u,%u,%u)", 205 + a, 100 + b, 30 + a / 2);
}

/* The label that fits w pixels: the name, cut with "..", or nothing. */
static void label(FILE *out, const char *name, double w)
{
	size_t fit = w > 6 ? (size_t)((w - 6) / CHAR_W) : 0;
	size_t len = strlen(name);
	if (fit < 3)
		return;
	if (len <= fit) {
		xml_text(out, name);
		return;
	}
	char *cut = strndup(name, fit - 2);
	if (cut)
		xml_text(out, cut);
	fputs("..", out);
	free(cut);
}

struct draw {
	FILE *out;
	const struct tree *t;
	bool by_time;
	double total;
	unsigned height;
	uint64_t frames;
};

static double value(const struct draw *d, const struct node *x)
{
	return d->by_time ? (double)x->time_ns : (double)x->count;
}

static void draw_node(struct draw *d, size_t id, double x0)
{
	const struct node *x = &d->t->v[id - 1];
	double frac = value(d, x) / d->total, px = frac * (WIDTH - 2 * PAD);
	if (px < MIN_PX)
		return;
	double left = PAD + x0 / d->total * (WIDTH - 2 * PAD);
	double y = d->height - BOTTOM - (x->depth + 1) * FRAME_H;
	char fill[32];
	color(fill, sizeof(fill), x);
	FILE *out = d->out;
	fprintf(out, "<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%u\"><title>",
		x0 / d->total, frac, x->depth);
	xml_text(out, x->name);
	fprintf(out, " (%" PRIu64 " calls, %.3f ms, %.2f%%)</title>"
		"<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%d\" fill=\"%s\" rx=\"2\"/>"
		"<text x=\"%.1f\" y=\"%.0f\">", x->count, (double)x->time_ns / 1e6, frac * 100,
		left, y, px, FRAME_H - 1, fill, left + 3, y + FRAME_H - 4);
	label(out, x->name, px);
	fputs("</text></g>\n", out);
	d->frames++;
	double at = x0;
	for (size_t c = x->child; c; c = d->t->v[c - 1].next) {
		draw_node(d, c, at);
		at += value(d, &d->t->v[c - 1]);
	}
}

static const char script[] =
	"(function(){\n"
	"var svg=document.getElementById('kprof-flame');\n"
	"if(!svg)return;\n"
	"var W=" STR(WIDTH) ",P=" STR(PAD) ",C=" STR(CHAR_W) ";\n"
	"var frames=[].slice.call(svg.querySelectorAll('g.f'));\n"
	"var details=svg.querySelector('#kf-details'),unzoom=svg.querySelector('#kf-unzoom');\n"
	"var matched=svg.querySelector('#kf-matched');\n"
	"function fit(t,name,w){var n=Math.floor((w-6)/C);\n"
	" t.textContent=n<3?'':(name.length<=n?name:name.slice(0,n-2)+'..');}\n"
	"function place(g,x,w){var r=g.querySelector('rect'),t=g.querySelector('text');\n"
	" if(w<=0){g.style.display='none';return;}g.style.display='';\n"
	" var px=w*(W-2*P);r.setAttribute('x',(P+x*(W-2*P)).toFixed(1));\n"
	" r.setAttribute('width',px.toFixed(1));t.setAttribute('x',(P+x*(W-2*P)+3).toFixed(1));\n"
	" fit(t,g.getAttribute('data-n'),px);}\n"
	"frames.forEach(function(g){var tt=g.querySelector('title').textContent;\n"
	" g.setAttribute('data-n',tt.slice(0,tt.lastIndexOf(' (')));\n"
	" g.addEventListener('click',function(){zoom(g);});\n"
	" g.addEventListener('mouseover',function(){details.textContent=tt;});\n"
	" g.addEventListener('mouseout',function(){details.textContent=' ';});});\n"
	"function num(g,k){return parseFloat(g.getAttribute('data-'+k));}\n"
	"function zoom(z){var x=num(z,'x'),w=num(z,'w'),d=num(z,'d'),e=1e-9;\n"
	" frames.forEach(function(g){var gx=num(g,'x'),gw=num(g,'w'),gd=num(g,'d');\n"
	"  if(gd>=d&&gx>=x-e&&gx+gw<=x+w+e)place(g,(gx-x)/w,gw/w);\n"
	"  else if(gd<d&&gx<=x+e&&gx+gw>=x+w-e)place(g,0,1);\n"
	"  else place(g,0,0);});\n"
	" unzoom.style.opacity=1;svg.setAttribute('data-zoomed',z.getAttribute('data-n'));}\n"
	"function reset(){frames.forEach(function(g){place(g,num(g,'x'),num(g,'w'));});\n"
	" unzoom.style.opacity=0;svg.removeAttribute('data-zoomed');}\n"
	"function search(re){var r;try{r=new RegExp(re);}catch(e){matched.textContent='bad expression';return -1;}\n"
	" var spans=[];frames.forEach(function(g){var rect=g.querySelector('rect');\n"
	"  if(!rect.hasAttribute('data-c'))rect.setAttribute('data-c',rect.getAttribute('fill'));\n"
	"  if(re&&r.test(g.getAttribute('data-n'))){rect.setAttribute('fill','rgb(230,0,230)');\n"
	"   spans.push([num(g,'x'),num(g,'x')+num(g,'w')]);}\n"
	"  else rect.setAttribute('fill',rect.getAttribute('data-c'));});\n"
	" spans.sort(function(a,b){return a[0]-b[0];});var sum=0,end=-1;\n"
	" spans.forEach(function(s){if(s[0]>=end){sum+=s[1]-s[0];end=s[1];}\n"
	"  else if(s[1]>end){sum+=s[1]-end;end=s[1];}});\n"
	" matched.textContent=re?'Matched: '+(sum*100).toFixed(1)+'%':'';\n"
	" svg.setAttribute('data-matched',(sum*100).toFixed(1));return sum*100;}\n"
	"unzoom.addEventListener('click',reset);\n"
	"svg.querySelector('#kf-search').addEventListener('click',function(){\n"
	" var re=prompt('Search frames (regular expression; empty: clear)','');\n"
	" if(re!==null)search(re);});\n"
	"window.kprofFlameSearch=search;window.kprofFlameZoom=function(name){\n"
	" for(var i=0;i<frames.length;i++)if(frames[i].getAttribute('data-n')===name){zoom(frames[i]);return true;}\n"
	" return false;};window.kprofFlameReset=reset;\n"
	"var q=new URLSearchParams(location.search);\n"
	"if(q.get('z')!==null)window.kprofFlameZoom(q.get('z'));\n"
	"if(q.get('s'))search(q.get('s'));\n"
	"svg.setAttribute('data-ready',frames.length);\n"
	"})();\n";

int ka_write_flame(FILE *out, const struct ka_model *m, bool by_time, bool standalone,
		   uint64_t *frames)
{
	struct ka_folded_line *lines;
	size_t n;
	struct tree t = { 0 };
	*frames = 0;
	int err = ka_folded_collect(m, &lines, &n);
	if (err)
		return err;
	err = build(&t, lines, n);
	ka_folded_free(lines, n);
	if (err)
		goto out;
	struct draw d = { .out = out, .t = &t, .by_time = by_time };
	d.total = value(&d, &t.v[0]);
	d.height = TOP + (t.max_depth + 1) * FRAME_H + BOTTOM + 8;
	if (standalone)
		fputs("<?xml version=\"1.0\" standalone=\"no\"?>\n", out);
	fprintf(out, "<svg id=\"kprof-flame\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%u\" viewBox=\"0 0 %d %u\" style=\"max-width:100%%;height:auto\">\n"
		"<style>#kprof-flame text{font:12px monospace;fill:#000}"
		"#kprof-flame g.f:hover rect{stroke:#000;stroke-width:.5}"
		"#kprof-flame g.f{cursor:pointer}#kprof-flame .b{cursor:pointer;fill:#333}</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#fafafa\"/>\n"
		"<text x=\"%d\" y=\"22\" text-anchor=\"middle\" style=\"font-size:15px\">"
		"Syscalls by stack: width = %s</text>\n"
		"<text id=\"kf-unzoom\" class=\"b\" x=\"%d\" y=\"22\" style=\"opacity:0\">Reset Zoom</text>\n"
		"<text id=\"kf-search\" class=\"b\" x=\"%d\" y=\"22\" text-anchor=\"end\">Search</text>\n"
		"<text id=\"kf-matched\" x=\"%d\" y=\"%u\" text-anchor=\"end\"> </text>\n"
		"<text id=\"kf-details\" x=\"%d\" y=\"%u\"> </text>\n",
		WIDTH, d.height, WIDTH, d.height, WIDTH / 2,
		by_time ? "time in the calls" : "number of calls", PAD, WIDTH - PAD,
		WIDTH - PAD, d.height - 8, PAD, d.height - 8);
	if (d.total > 0)
		draw_node(&d, 1, 0);
	else
		fprintf(out, "<text x=\"%d\" y=\"%u\" text-anchor=\"middle\">no calls%s</text>\n",
			WIDTH / 2, d.height / 2, by_time ? " with time" : "");
	fprintf(out, "<script><![CDATA[\n%s]]></script>\n</svg>\n", script);
	*frames = d.frames;
	err = ferror(out) ? -EIO : 0;
out:
	for (size_t i = 0; i < t.n; i++)
		free(t.v[i].name);
	free(t.v);
	return err;
}
