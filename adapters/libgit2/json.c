/* A small JSON reader and writer: see json.h for what it accepts. */
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	const char *p;
	char *err;
	size_t err_size;
	int depth;
} parser;

static int parse_value(parser *ps, json_value *out);

static int fail(parser *ps, const char *what)
{
	snprintf(ps->err, ps->err_size, "bad JSON: %s at \"%.20s\"", what, ps->p);
	return -1;
}

static void skip_space(parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

static int literal(parser *ps, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(ps->p, word, n) != 0)
		return fail(ps, "unknown literal");
	ps->p += n;
	return 0;
}

/* -- strings -------------------------------------------------------------------------- */

typedef struct {
	char *data;
	size_t len, cap;
} bytes;

static int bytes_put(bytes *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 32;
		char *data;

		while (cap < b->len + n + 1)
			cap *= 2;
		if ((data = realloc(b->data, cap)) == NULL)
			return -1;
		b->data = data;
		b->cap = cap;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

static int put_utf8(bytes *b, unsigned long cp)
{
	char s[4];
	size_t n;

	if (cp < 0x80) {
		s[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		s[0] = (char)(0xC0 | (cp >> 6));
		s[1] = (char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		s[0] = (char)(0xE0 | (cp >> 12));
		s[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		s[2] = (char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		s[0] = (char)(0xF0 | (cp >> 18));
		s[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		s[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		s[3] = (char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	return bytes_put(b, s, n);
}

static int hex4(parser *ps, unsigned long *out)
{
	int i;

	*out = 0;
	for (i = 0; i < 4; i++) {
		char c = *ps->p;
		int digit;

		if (c >= '0' && c <= '9')
			digit = c - '0';
		else if (c >= 'a' && c <= 'f')
			digit = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			digit = c - 'A' + 10;
		else
			return fail(ps, "bad \\u escape");
		ps->p++;
		*out = *out * 16 + (unsigned long)digit;
	}
	return 0;
}

/* After "\u": one code point, joining a surrogate pair; lone surrogates become U+FFFD. */
static int unicode_escape(parser *ps, bytes *b)
{
	unsigned long cp, low;

	if (hex4(ps, &cp) < 0)
		return -1;
	if (cp >= 0xD800 && cp < 0xDC00 && ps->p[0] == '\\' && ps->p[1] == 'u') {
		const char *back = ps->p;

		ps->p += 2;
		if (hex4(ps, &low) < 0)
			return -1;
		if (low >= 0xDC00 && low < 0xE000)
			cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
		else
			ps->p = back;
	}
	if (cp >= 0xD800 && cp < 0xE000)
		cp = 0xFFFD;
	if (cp == 0)
		return fail(ps, "NUL in a string");
	return put_utf8(b, cp) < 0 ? fail(ps, "out of memory") : 0;
}

static int escape(parser *ps, bytes *b)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *hit;
	char c = *ps->p;

	if (c == 'u') {
		ps->p++;
		return unicode_escape(ps, b);
	}
	if (c == '\0' || (hit = strchr(from, c)) == NULL)
		return fail(ps, "bad escape");
	ps->p++;
	return bytes_put(b, &to[hit - from], 1) < 0 ? fail(ps, "out of memory") : 0;
}

static int parse_string_raw(parser *ps, char **out)
{
	bytes b = { NULL, 0, 0 };

	ps->p++; /* the opening quote */
	if (bytes_put(&b, "", 0) < 0)
		return fail(ps, "out of memory");
	while (*ps->p != '"') {
		const char *run = ps->p;

		if (*ps->p == '\0' || (unsigned char)*ps->p < 0x20) {
			free(b.data);
			return fail(ps, "unterminated string or control character");
		}
		if (*ps->p == '\\') {
			ps->p++;
			if (escape(ps, &b) < 0) {
				free(b.data);
				return -1;
			}
			continue;
		}
		while (*ps->p != '"' && *ps->p != '\\' && (unsigned char)*ps->p >= 0x20)
			ps->p++;
		if (bytes_put(&b, run, (size_t)(ps->p - run)) < 0) {
			free(b.data);
			return fail(ps, "out of memory");
		}
	}
	ps->p++;
	*out = b.data;
	return 0;
}

/* -- numbers, arrays, objects ---------------------------------------------------------- */

static int parse_int(parser *ps, json_value *out)
{
	const char *start = ps->p;
	long long n = 0;
	int negative = (*ps->p == '-');

	if (negative)
		ps->p++;
	if (*ps->p < '0' || *ps->p > '9')
		return fail(ps, "bad number");
	if (*ps->p == '0' && ps->p[1] >= '0' && ps->p[1] <= '9')
		return fail(ps, "leading zero");
	while (*ps->p >= '0' && *ps->p <= '9') {
		int digit = *ps->p++ - '0';

		if (n > (9223372036854775807LL - digit) / 10) {
			ps->p = start;
			return fail(ps, "integer out of range");
		}
		n = n * 10 + digit;
	}
	if (*ps->p == '.' || *ps->p == 'e' || *ps->p == 'E')
		return fail(ps, "only integers are accepted");
	out->type = JSON_INT;
	out->integer = negative ? -n : n;
	return 0;
}

/* Makes room for one more item (and key) in an array or object. */
static int grow(json_value *v, size_t *cap)
{
	if (v->count < *cap)
		return 0;
	*cap = *cap ? *cap * 2 : 4;
	{
		json_value *items = realloc(v->items, *cap * sizeof(*items));

		if (items == NULL)
			return -1;
		v->items = items;
	}
	if (v->type == JSON_OBJECT) {
		char **keys = realloc(v->keys, *cap * sizeof(*keys));

		if (keys == NULL)
			return -1;
		v->keys = keys;
	}
	return 0;
}

/* One item of an array or object (a key first for an object), appended to v. */
static int parse_item(parser *ps, json_value *v, size_t *cap)
{
	char *key = NULL;

	if (grow(v, cap) < 0)
		return fail(ps, "out of memory");
	skip_space(ps);
	if (v->type == JSON_OBJECT) {
		if (*ps->p != '"')
			return fail(ps, "expected a key");
		if (parse_string_raw(ps, &key) < 0)
			return -1;
		skip_space(ps);
		if (*ps->p++ != ':') {
			free(key);
			return fail(ps, "expected ':'");
		}
		v->keys[v->count] = key;
	}
	memset(&v->items[v->count], 0, sizeof(v->items[0]));
	v->count++; /* counted before parsing, so json_free releases a half-parsed item */
	return parse_value(ps, &v->items[v->count - 1]);
}

static int parse_container(parser *ps, json_value *out, json_type type, char close)
{
	size_t cap = 0;

	if (++ps->depth > JSON_MAX_DEPTH)
		return fail(ps, "nested too deeply");
	out->type = type;
	ps->p++;
	skip_space(ps);
	if (*ps->p == close) {
		ps->p++;
		ps->depth--;
		return 0;
	}
	for (;;) {
		if (parse_item(ps, out, &cap) < 0)
			return -1;
		skip_space(ps);
		if (*ps->p == close)
			break;
		if (*ps->p++ != ',')
			return fail(ps, "expected ',' or a closing bracket");
	}
	ps->p++;
	ps->depth--;
	return 0;
}

static int parse_value(parser *ps, json_value *out)
{
	skip_space(ps);
	switch (*ps->p) {
	case '{':
		return parse_container(ps, out, JSON_OBJECT, '}');
	case '[':
		return parse_container(ps, out, JSON_ARRAY, ']');
	case '"':
		out->type = JSON_STRING;
		return parse_string_raw(ps, &out->string);
	case 't':
		out->type = JSON_BOOL;
		out->integer = 1;
		return literal(ps, "true");
	case 'f':
		out->type = JSON_BOOL;
		return literal(ps, "false");
	case 'n':
		out->type = JSON_NULL;
		return literal(ps, "null");
	default:
		return parse_int(ps, out);
	}
}

int json_parse(const char *text, json_value *out, char *err, size_t err_size)
{
	parser ps = { text, err, err_size, 0 };

	memset(out, 0, sizeof(*out));
	if (parse_value(&ps, out) < 0) {
		json_free(out);
		return -1;
	}
	skip_space(&ps);
	if (*ps.p != '\0') {
		json_free(out);
		return fail(&ps, "trailing text");
	}
	return 0;
}

void json_free(json_value *v)
{
	size_t i;

	for (i = 0; i < v->count; i++) {
		if (v->type == JSON_OBJECT)
			free(v->keys[i]);
		json_free(&v->items[i]);
	}
	free(v->keys);
	free(v->items);
	free(v->string);
	memset(v, 0, sizeof(*v));
}

const json_value *json_get(const json_value *v, const char *key)
{
	size_t i;

	if (v == NULL || v->type != JSON_OBJECT)
		return NULL;
	for (i = 0; i < v->count; i++)
		if (strcmp(v->keys[i], key) == 0)
			return &v->items[i];
	return NULL;
}

const char *json_get_string(const json_value *v, const char *key)
{
	const json_value *m = json_get(v, key);

	return m != NULL && m->type == JSON_STRING ? m->string : NULL;
}

int json_get_bool(const json_value *v, const char *key)
{
	const json_value *m = json_get(v, key);

	return m != NULL && m->type == JSON_BOOL && m->integer;
}

/* -- writing --------------------------------------------------------------------------- */

static void put(json_buf *buf, const char *s, size_t n)
{
	if (buf->failed)
		return;
	if (buf->len + n + 1 > buf->cap) {
		size_t cap = buf->cap ? buf->cap * 2 : 256;
		char *data;

		while (cap < buf->len + n + 1)
			cap *= 2;
		if ((data = realloc(buf->data, cap)) == NULL) {
			buf->failed = 1;
			return;
		}
		buf->data = data;
		buf->cap = cap;
	}
	memcpy(buf->data + buf->len, s, n);
	buf->len += n;
	buf->data[buf->len] = '\0';
}

void json_buf_free(json_buf *buf)
{
	free(buf->data);
	memset(buf, 0, sizeof(*buf));
}

void json_raw(json_buf *buf, const char *text)
{
	put(buf, text, strlen(text));
}

/* The length of the valid UTF-8 sequence at s, or 0 when s does not start one. */
static size_t utf8_length(const unsigned char *s)
{
	size_t n, i;
	unsigned long cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xC2 && s[0] < 0xE0)
		n = 2, cp = s[0] & 0x1F;
	else if (s[0] >= 0xE0 && s[0] < 0xF0)
		n = 3, cp = s[0] & 0x0F;
	else if (s[0] >= 0xF0 && s[0] < 0xF5)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp < 0xE000))) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
		return 0;
	return n;
}

/* Escapes quotes, backslashes and control characters; bytes that are not UTF-8 become
 * U+FFFD, as the protocol asks. */
void json_string(json_buf *buf, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;

	if (text == NULL) {
		json_raw(buf, "null");
		return;
	}
	put(buf, "\"", 1);
	while (*s) {
		size_t n = utf8_length(s);
		char esc[8];

		if (n == 0) {
			json_raw(buf, "\\ufffd");
			s++;
		} else if (*s == '"' || *s == '\\') {
			esc[0] = '\\';
			esc[1] = (char)*s++;
			put(buf, esc, 2);
		} else if (*s < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", *s++);
			json_raw(buf, esc);
		} else {
			put(buf, (const char *)s, n);
			s += n;
		}
	}
	put(buf, "\"", 1);
}

void json_int(json_buf *buf, long long number)
{
	char text[32];

	snprintf(text, sizeof(text), "%lld", number);
	json_raw(buf, text);
}

void json_key(json_buf *buf, const char *key)
{
	if (buf->len > 0 && buf->data[buf->len - 1] != '{')
		put(buf, ",", 1);
	json_string(buf, key);
	put(buf, ":", 1);
}

static void write_container(json_buf *buf, const json_value *v)
{
	size_t i;

	json_raw(buf, v->type == JSON_OBJECT ? "{" : "[");
	for (i = 0; i < v->count; i++) {
		if (v->type == JSON_OBJECT)
			json_key(buf, v->keys[i]);
		else if (i > 0)
			json_raw(buf, ",");
		json_value_write(buf, &v->items[i]);
	}
	json_raw(buf, v->type == JSON_OBJECT ? "}" : "]");
}

void json_value_write(json_buf *buf, const json_value *v)
{
	switch (v->type) {
	case JSON_NULL:
		json_raw(buf, "null");
		break;
	case JSON_BOOL:
		json_raw(buf, v->integer ? "true" : "false");
		break;
	case JSON_INT:
		json_int(buf, v->integer);
		break;
	case JSON_STRING:
		json_string(buf, v->string);
		break;
	default:
		write_container(buf, v);
		break;
	}
}
