/*
 * A small JSON reader and writer for the adapter protocol (adapters/PROTOCOL.md).
 *
 * Reads only what the protocol sends: objects, arrays, strings (all escapes, \u with
 * surrogate pairs, written out as UTF-8), integers, true, false, null. Fractions and
 * exponents are refused (the protocol has none), as are strings holding NUL and nesting
 * deeper than JSON_MAX_DEPTH. Writes compact JSON into a growing buffer.
 */
#ifndef ADAPTER_JSON_H
#define ADAPTER_JSON_H

#include <stddef.h>

#define JSON_MAX_DEPTH 32

typedef enum { JSON_NULL, JSON_BOOL, JSON_INT, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_type;

typedef struct json_value {
	json_type type;
	long long integer;          /* JSON_INT; JSON_BOOL: 0 or 1 */
	char *string;               /* JSON_STRING: NUL-terminated UTF-8 */
	size_t count;               /* JSON_ARRAY, JSON_OBJECT: number of items */
	char **keys;                /* JSON_OBJECT: one key per item */
	struct json_value *items;   /* JSON_ARRAY, JSON_OBJECT */
} json_value;

/* Parses text (NUL-terminated) into *out. 0 on success; -1 with a message in err. */
int json_parse(const char *text, json_value *out, char *err, size_t err_size);
void json_free(json_value *value);

/* The member named key of an object, or NULL (also when value is not an object). */
const json_value *json_get(const json_value *value, const char *key);
/* The member's string, or NULL when it is absent or not a string. */
const char *json_get_string(const json_value *value, const char *key);
/* The member's truth: true is 1; absent, null and false are 0. */
int json_get_bool(const json_value *value, const char *key);

typedef struct {
	char *data;
	size_t len, cap;
	int failed;                 /* set when memory ran out; the text is then unusable */
} json_buf;

void json_buf_free(json_buf *buf);
void json_raw(json_buf *buf, const char *text);
void json_string(json_buf *buf, const char *text);   /* NULL writes null */
void json_int(json_buf *buf, long long number);
void json_value_write(json_buf *buf, const json_value *value);
/* ,"key": (the comma only when something precedes it inside the braces). */
void json_key(json_buf *buf, const char *key);

#endif
