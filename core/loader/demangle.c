/* SPDX-License-Identifier: MIT */
/*
 * core/loader/demangle.c - a small Itanium C++ ABI demangler and the
 * kernel-name matcher built on it.
 *
 * GPU kernels are C++ functions, so the names a user writes in a section
 * ("vec_add", "ns::gemm<float>") rarely equal the symbol ("_ZN2ns4gemmIfEEvPT_i").
 * The demangler covers what kernel names use: nested names, templates whose
 * arguments are types or integer literals, substitutions, template
 * parameters, pointers, references, qualifiers and parameter lists.
 * Anything else (operators, function pointers, expressions, local names)
 * makes it fail cleanly, and matching then uses the mangled name only.
 *
 * Every string lives in fixed-size buffers inside struct dm: there is no
 * allocation, and a name too long for them is an error, not an overflow.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "loader_internal.h"

#define DM_STR 256
#define DM_MAX_SUBS 64
#define DM_MAX_DEPTH 24

struct dstr {
	char s[DM_STR];
	size_t n;
};

struct dm {
	const char *p;
	int err;
	int depth;
	struct dstr subs[DM_MAX_SUBS];
	size_t nsubs;
	struct dstr targs[DM_MAX_SUBS]; /* template arguments of the function name */
	size_t ntargs;
	int collect_targs;
	struct dstr name; /* qualified function name, template arguments included */
	struct dstr base; /* last component of the name, without template arguments */
};

static void ds_init(struct dstr *d)
{
	d->s[0] = '\0';
	d->n = 0;
}

static void ds_addn(struct dm *dm, struct dstr *d, const char *s, size_t n)
{
	if (d->n + n >= DM_STR) {
		dm->err = -ENAMETOOLONG;
		return;
	}
	memcpy(d->s + d->n, s, n);
	d->n += n;
	d->s[d->n] = '\0';
}

static void ds_add(struct dm *dm, struct dstr *d, const char *s)
{
	ds_addn(dm, d, s, strlen(s));
}

static void add_sub(struct dm *dm, const struct dstr *d)
{
	if (dm->nsubs < DM_MAX_SUBS)
		dm->subs[dm->nsubs++] = *d;
	else
		dm->err = -E2BIG;
}

static void parse_type(struct dm *dm, struct dstr *out);

/* <number> := [n] <decimal>; returns -1 on error. */
static long parse_number(struct dm *dm, int *neg)
{
	long v = 0;

	*neg = 0;
	if (*dm->p == 'n') {
		*neg = 1;
		dm->p++;
	}
	if (!isdigit((unsigned char)*dm->p))
		return -1;
	while (isdigit((unsigned char)*dm->p)) {
		v = v * 10 + (*dm->p++ - '0');
		if (v > 100000000)
			return -1;
	}
	return v;
}

static void parse_source_name(struct dm *dm, struct dstr *out, struct dstr *base)
{
	int neg;
	long len = parse_number(dm, &neg);

	if (len <= 0 || neg || strnlen(dm->p, (size_t)len) < (size_t)len) {
		dm->err = -EINVAL;
		return;
	}
	if (len >= 10 && strncmp(dm->p, "_GLOBAL__N", 10) == 0) {
		ds_add(dm, out, "(anonymous namespace)");
	} else {
		ds_addn(dm, out, dm->p, (size_t)len);
		if (base) {
			ds_init(base);
			ds_addn(dm, base, dm->p, (size_t)len);
		}
	}
	dm->p += len;
}

/* <seq-id> in base 36, then '_': S_ is 0, S0_ is 1, ... */
static int parse_seq(struct dm *dm, char end, size_t *idx)
{
	size_t v = 0;

	if (*dm->p == end) {
		dm->p++;
		*idx = 0;
		return 0;
	}
	while (*dm->p && *dm->p != end) {
		char c = *dm->p++;

		if (isdigit((unsigned char)c))
			v = v * 36 + (size_t)(c - '0');
		else if (c >= 'A' && c <= 'Z')
			v = v * 36 + (size_t)(c - 'A' + 10);
		else
			return -EINVAL;
		if (v > 4096)
			return -EINVAL;
	}
	if (*dm->p != end)
		return -EINVAL;
	dm->p++;
	*idx = v + 1;
	return 0;
}

static void parse_template_args(struct dm *dm, struct dstr *out, int top);

static void parse_literal(struct dm *dm, struct dstr *out)
{
	char c = *dm->p++;
	const char *suffix = "";
	char num[32];
	int neg;
	long v;

	switch (c) {
	case 'b':
		v = parse_number(dm, &neg);
		if (v < 0 || v > 1 || neg) {
			dm->err = -EINVAL;
			return;
		}
		ds_add(dm, out, v ? "true" : "false");
		break;
	case 'i':
	case 's':
	case 'c':
	case 'a':
	case 'h':
	case 't':
		goto plain;
	case 'j':
		suffix = "u";
		goto plain;
	case 'l':
		suffix = "l";
		goto plain;
	case 'm':
		suffix = "ul";
		goto plain;
	case 'x':
		suffix = "ll";
		goto plain;
	case 'y':
		suffix = "ull";
	plain:
		v = parse_number(dm, &neg);
		if (v < 0) {
			dm->err = -EINVAL;
			return;
		}
		snprintf(num, sizeof(num), "%s%ld%s", neg ? "-" : "", v, suffix);
		ds_add(dm, out, num);
		break;
	default:
		dm->err = -EINVAL; /* floats, nullptr, external names: not needed for kernels */
		return;
	}
	if (*dm->p++ != 'E')
		dm->err = -EINVAL;
}

static void parse_template_args(struct dm *dm, struct dstr *out, int top)
{
	int first = 1;

	dm->p++; /* 'I' */
	if (top)
		dm->ntargs = 0;
	ds_add(dm, out, "<");
	while (!dm->err && *dm->p && *dm->p != 'E') {
		struct dstr arg;

		ds_init(&arg);
		if (*dm->p == 'L') {
			dm->p++;
			parse_literal(dm, &arg);
		} else if (*dm->p == 'J') {
			/* argument pack: its elements, comma-separated */
			dm->p++;
			while (!dm->err && *dm->p && *dm->p != 'E') {
				struct dstr t;

				ds_init(&t);
				parse_type(dm, &t);
				if (arg.n)
					ds_add(dm, &arg, ", ");
				ds_add(dm, &arg, t.s);
			}
			if (*dm->p != 'E')
				dm->err = -EINVAL;
			else
				dm->p++;
		} else {
			parse_type(dm, &arg);
		}
		if (dm->err)
			return;
		if (top && dm->ntargs < DM_MAX_SUBS)
			dm->targs[dm->ntargs++] = arg;
		if (!first)
			ds_add(dm, out, ", ");
		ds_add(dm, out, arg.s);
		first = 0;
	}
	if (*dm->p != 'E') {
		dm->err = -EINVAL;
		return;
	}
	dm->p++;
	ds_add(dm, out, ">");
}

/* S_ / S<seq>_ and the std:: abbreviations. Returns 1 if the result is itself
 * a new substitution candidate (St<name>), else 0. */
static int parse_substitution(struct dm *dm, struct dstr *out, struct dstr *base)
{
	static const struct {
		char c;
		const char *s;
	} abbr[] = {
		{'a', "std::allocator"}, {'b', "std::basic_string"}, {'s', "std::string"},
		{'i', "std::istream"},   {'o', "std::ostream"},      {'d', "std::iostream"},
	};
	size_t i, idx;

	dm->p++; /* 'S' */
	if (*dm->p == 't') {
		dm->p++;
		ds_add(dm, out, "std::");
		parse_source_name(dm, out, base);
		return 1;
	}
	for (i = 0; i < sizeof(abbr) / sizeof(abbr[0]); i++) {
		if (*dm->p == abbr[i].c) {
			dm->p++;
			ds_add(dm, out, abbr[i].s);
			return 0;
		}
	}
	if (parse_seq(dm, '_', &idx) || idx >= dm->nsubs) {
		dm->err = -EINVAL;
		return 0;
	}
	ds_add(dm, out, dm->subs[idx].s);
	return 0;
}

static void parse_template_param(struct dm *dm, struct dstr *out)
{
	size_t idx;

	dm->p++; /* 'T' */
	if (parse_seq(dm, '_', &idx) || idx >= dm->ntargs) {
		dm->err = -EINVAL;
		return;
	}
	ds_add(dm, out, dm->targs[idx].s);
}

/* N [qualifiers] <prefix components> E */
static void parse_nested_name(struct dm *dm, struct dstr *out, int top, char *cv)
{
	int comps = 0, fresh = 1;

	int seen_const = 0, seen_volatile = 0, seen_restrict = 0;

	dm->p++; /* 'N' */
	cv[0] = '\0';
	/* Each qualifier at most once (a repeated one is not a valid mangling),
	 * which also bounds what is written into the caller's cv buffer. */
	while (*dm->p == 'K' || *dm->p == 'V' || *dm->p == 'r') {
		int *seen = *dm->p == 'K' ? &seen_const : *dm->p == 'V' ? &seen_volatile : &seen_restrict;

		if (*seen) {
			dm->err = -EINVAL;
			return;
		}
		*seen = 1;
		dm->p++;
	}
	/* " const volatile" is 15 characters: always fits the 24-byte buffers. */
	snprintf(cv, 24, "%s%s", seen_const ? " const" : "", seen_volatile ? " volatile" : "");
	while (!dm->err && *dm->p && *dm->p != 'E') {
		if (*dm->p == 'I') {
			if (!comps) {
				dm->err = -EINVAL;
				return;
			}
			parse_template_args(dm, out, top);
		} else {
			if (comps)
				ds_add(dm, out, "::");
			if (isdigit((unsigned char)*dm->p))
				parse_source_name(dm, out, top ? &dm->base : NULL);
			else if (*dm->p == 'S' && !comps)
				/* an existing substitution is not a new candidate; St<name> is */
				fresh = parse_substitution(dm, out, top ? &dm->base : NULL);
			else if (*dm->p == 'T' && !comps)
				parse_template_param(dm, out);
			else if ((*dm->p == 'C' || *dm->p == 'D') && comps && dm->p[1] && isdigit((unsigned char)dm->p[1])) {
				/* constructor / destructor: the class name again */
				const char *cls = strrchr(out->s, ':');
				char dtor = *dm->p;

				dm->p += 2;
				if (dtor == 'D')
					ds_add(dm, out, "~");
				ds_add(dm, out, cls ? cls + 1 : out->s);
			} else {
				dm->err = -EINVAL; /* operators, local and unnamed entities */
				return;
			}
			comps++;
		}
		if (!dm->err && *dm->p != 'E' && fresh)
			add_sub(dm, out);
		fresh = 1;
	}
	if (*dm->p != 'E' || !comps) {
		dm->err = -EINVAL;
		return;
	}
	dm->p++;
}

static const char *builtin_type(struct dm *dm)
{
	static const struct {
		const char *code, *name;
	} b[] = {
		{"v", "void"},      {"w", "wchar_t"},       {"b", "bool"},
		{"c", "char"},      {"a", "signed char"},   {"h", "unsigned char"},
		{"s", "short"},     {"t", "unsigned short"}, {"i", "int"},
		{"j", "unsigned int"}, {"l", "long"},       {"m", "unsigned long"},
		{"x", "long long"}, {"y", "unsigned long long"}, {"n", "__int128"},
		{"o", "unsigned __int128"}, {"f", "float"}, {"d", "double"},
		{"e", "long double"}, {"g", "__float128"}, {"z", "..."},
		{"Dh", "half"},     {"Di", "char32_t"},     {"Ds", "char16_t"},
		{"Du", "char8_t"},  {"Dn", "decltype(nullptr)"}, {"DF16_", "_Float16"},
	};
	size_t i;

	for (i = 0; i < sizeof(b) / sizeof(b[0]); i++) {
		size_t n = strlen(b[i].code);

		if (strncmp(dm->p, b[i].code, n) == 0) {
			dm->p += n;
			return b[i].name;
		}
	}
	return NULL;
}

static void parse_type(struct dm *dm, struct dstr *out)
{
	const char *bt;
	struct dstr t;
	char cv[24];

	if (dm->err)
		return;
	if (++dm->depth > DM_MAX_DEPTH) {
		dm->err = -E2BIG;
		return;
	}
	ds_init(&t);
	switch (*dm->p) {
	case 'P':
	case 'R':
	case 'O':
	case 'K':
	case 'V':
	case 'r': {
		char c = *dm->p++;

		parse_type(dm, &t);
		if (c == 'P')
			ds_add(dm, &t, "*");
		else if (c == 'R')
			ds_add(dm, &t, "&");
		else if (c == 'O')
			ds_add(dm, &t, "&&");
		else
			ds_add(dm, &t, c == 'K' ? " const" : c == 'V' ? " volatile" : " restrict");
		add_sub(dm, &t);
		break;
	}
	case 'N':
		parse_nested_name(dm, &t, 0, cv);
		add_sub(dm, &t);
		break;
	case 'S': {
		int is_new = parse_substitution(dm, &t, NULL);

		if (is_new || *dm->p == 'I')
			add_sub(dm, &t);
		if (*dm->p == 'I') {
			parse_template_args(dm, &t, 0);
			add_sub(dm, &t);
		}
		break;
	}
	case 'T':
		parse_template_param(dm, &t);
		add_sub(dm, &t);
		if (*dm->p == 'I') {
			parse_template_args(dm, &t, 0);
			add_sub(dm, &t);
		}
		break;
	case '0':
	case '1':
	case '2':
	case '3':
	case '4':
	case '5':
	case '6':
	case '7':
	case '8':
	case '9':
		parse_source_name(dm, &t, NULL);
		add_sub(dm, &t);
		if (*dm->p == 'I') {
			parse_template_args(dm, &t, 0);
			add_sub(dm, &t);
		}
		break;
	default:
		bt = builtin_type(dm);
		if (!bt)
			dm->err = -EINVAL; /* arrays, function types, member pointers, decltype, vendor types */
		else
			ds_add(dm, &t, bt);
		break;
	}
	dm->depth--;
	if (!dm->err)
		ds_add(dm, out, t.s);
}

/* _Z <name> <bare-function-type>; writes "ret name(params)" into out. */
static void parse_encoding(struct dm *dm, struct dstr *out)
{
	int is_template = 0, first = 1;
	struct dstr ret, params;
	char cv[24] = "";

	ds_init(&dm->name);
	ds_init(&ret);
	ds_init(&params);
	if (*dm->p == 'N') {
		parse_nested_name(dm, &dm->name, 1, cv);
	} else if (*dm->p == 'S' && dm->p[1] == 't') {
		parse_substitution(dm, &dm->name, &dm->base);
		if (*dm->p == 'I')
			add_sub(dm, &dm->name);
	} else if (isdigit((unsigned char)*dm->p)) {
		parse_source_name(dm, &dm->name, &dm->base);
		if (*dm->p == 'I')
			add_sub(dm, &dm->name);
	} else {
		dm->err = -EINVAL;
		return;
	}
	if (*dm->p == 'I')
		parse_template_args(dm, &dm->name, 1);
	if (dm->err)
		return;
	is_template = dm->name.n && dm->name.s[dm->name.n - 1] == '>';
	if (is_template && *dm->p) {
		parse_type(dm, &ret);
		ds_add(dm, out, ret.s);
		ds_add(dm, out, " ");
	}
	ds_add(dm, out, dm->name.s);
	if (!*dm->p)
		return; /* a data object: no parameter list */
	ds_add(dm, &params, "(");
	if (dm->p[0] == 'v' && dm->p[1] == '\0') {
		dm->p++;
	} else {
		while (!dm->err && *dm->p && *dm->p != '.') {
			struct dstr t;

			ds_init(&t);
			parse_type(dm, &t);
			if (!first)
				ds_add(dm, &params, ", ");
			ds_add(dm, &params, t.s);
			first = 0;
		}
	}
	ds_add(dm, &params, ")");
	ds_add(dm, &params, cv);
	ds_add(dm, out, params.s);
}

/* Demangle into dm; 0 or a negative errno. Suffixes such as ".clone.1" are ignored. */
static int demangle(struct dm *dm, const char *mangled, struct dstr *out)
{
	memset(dm, 0, sizeof(*dm));
	ds_init(out);
	if (strncmp(mangled, "_Z", 2) != 0)
		return -EINVAL;
	dm->p = mangled + 2;
	parse_encoding(dm, out);
	if (!dm->err && *dm->p && *dm->p != '.')
		dm->err = -EINVAL;
	return dm->err;
}

int gbpf_demangle(const char *mangled, char *buf, size_t size)
{
	struct dstr out;
	struct dm dm;
	int err;

	if (!mangled || (!buf && size))
		return -EINVAL;
	if (strncmp(mangled, "_Z", 2) != 0) {
		err = snprintf(buf, size, "%s", mangled);
		return (size_t)err >= size ? -ENOSPC : err;
	}
	err = demangle(&dm, mangled, &out);
	if (err) {
		snprintf(buf, size, "%s", mangled);
		return -EINVAL;
	}
	err = snprintf(buf, size, "%s", out.s);
	return (size_t)err >= size ? -ENOSPC : err;
}

static int glob_or_equal(const char *pattern, const char *name)
{
	return strcmp(pattern, name) == 0 || fnmatch(pattern, name, 0) == 0;
}

int gbpf_kernel_name_match(const char *pattern, const char *kernel)
{
	struct dstr out;
	struct dm dm;

	if (!pattern || !*pattern || strcmp(pattern, "*") == 0)
		return 1;
	if (!kernel)
		return 0;
	if (glob_or_equal(pattern, kernel))
		return 1;
	if (strncmp(kernel, "_Z", 2) != 0 || demangle(&dm, kernel, &out) != 0)
		return 0;
	/* full signature, qualified name, and the bare function name */
	return glob_or_equal(pattern, out.s) || glob_or_equal(pattern, dm.name.s) ||
	       (dm.base.n && glob_or_equal(pattern, dm.base.s));
}

int gbpf_prog_targets_kernel(const struct gbpf_prog_desc *prog, const char *kernel)
{
	if (!prog || !kernel)
		return 0;
	if (!gbpf_attach_is_device(prog->attach.kind) &&
	    prog->attach.kind != GBPF_ATTACH_HOST_LAUNCH)
		return 0;
	return gbpf_kernel_name_match(prog->attach.target, kernel);
}
