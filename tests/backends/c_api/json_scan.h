/* Just enough JSON reading for the test backends: walk or search an
 * object's members, read a string, an integer or an array's length. The
 * text is trusted (it comes from the server), so malformed input only has
 * to fail safe (NULL), not be diagnosed. Values are located by pointer into
 * the caller's NUL-terminated text. */
#ifndef OXI_TEST_JSON_SCAN_H
#define OXI_TEST_JSON_SCAN_H

#include <stdlib.h>
#include <string.h>

static inline const char* json_ws(const char* p)
{
  while (p && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}

/* The end of the string starting at the quote `p`, past its closing quote. */
static inline const char* json_string_end(const char* p)
{
  for (p++; *p; p++) {
    if (*p == '\\' && p[1]) p++;
    else if (*p == '"') return p + 1;
  }
  return NULL;
}

/* The end of the value starting at `p` (after white space). */
static inline const char* json_value_end(const char* p)
{
  p = json_ws(p);
  if (!p || !*p) return NULL;
  if (*p == '"') return json_string_end(p);
  if (*p == '{' || *p == '[') {
    int depth = 0;
    while (*p) {
      if (*p == '"') {
        p = json_string_end(p);
        if (!p) return NULL;
        continue;
      }
      if (*p == '{' || *p == '[') depth++;
      if (*p == '}' || *p == ']') {
        if (--depth == 0) return p + 1;
      }
      p++;
    }
    return NULL;
  }
  while (*p && *p != ',' && *p != '}' && *p != ']' && *p != ' ' &&
         *p != '\n' && *p != '\r' && *p != '\t')
    p++;
  return p;
}

/* Calls `visit(key_start, key_len, value, end_of_value, ctx)` for each
 * member of the object at `obj`; stops early when it returns non-zero.
 * Returns 0 when the object was walked, -1 when it is not an object. */
static inline int json_members(
    const char* obj,
    int (*visit)(const char*, size_t, const char*, const char*, void*),
    void* ctx)
{
  const char* p = json_ws(obj);
  if (!p || *p != '{') return -1;
  p = json_ws(p + 1);
  while (p && *p == '"') {
    const char* key_end = json_string_end(p);
    if (!key_end) return -1;
    const char* value = json_ws(key_end);
    if (*value != ':') return -1;
    value = json_ws(value + 1);
    const char* end = json_value_end(value);
    if (!end) return -1;
    if (visit(p + 1, (size_t)(key_end - p - 2), value, end, ctx)) return 0;
    p = json_ws(end);
    if (*p == ',') p = json_ws(p + 1);
  }
  return (p && *p == '}') ? 0 : -1;
}

struct json_lookup {
  const char* key;
  const char* found;
};

static inline int json_lookup_visit(
    const char* key, size_t len, const char* value, const char* end,
    void* ctx)
{
  (void)end;
  struct json_lookup* l = ctx;
  if (strlen(l->key) == len && strncmp(key, l->key, len) == 0) {
    l->found = value;
    return 1;
  }
  return 0;
}

/* The value of member `key` of the object at `obj`, or NULL. */
static inline const char* json_member(const char* obj, const char* key)
{
  struct json_lookup l = {key, NULL};
  if (!obj) return NULL;
  json_members(obj, json_lookup_visit, &l);
  return l.found;
}

/* Copies the string value at `value` (unescaping \" \\ \/ \n \t) into `out`
 * of `cap` bytes; returns 0, or -1 when it is no string or does not fit. */
static inline int json_string(const char* value, char* out, size_t cap)
{
  value = json_ws(value);
  if (!value || *value != '"' || cap == 0) return -1;
  size_t n = 0;
  for (const char* p = value + 1; *p; p++) {
    char c = *p;
    if (c == '"') {
      out[n] = '\0';
      return 0;
    }
    if (c == '\\') {
      c = *++p;
      if (c == 'n') c = '\n';
      else if (c == 't') c = '\t';
      else if (c != '"' && c != '\\' && c != '/') return -1;
    }
    if (n + 1 >= cap) return -1;
    out[n++] = c;
  }
  return -1;
}

/* An integer value, written as a number or as a string (protobuf's JSON
 * writes 64-bit integers as strings); `fallback` when absent or neither. */
static inline long long json_int(const char* value, long long fallback)
{
  value = json_ws(value);
  if (!value) return fallback;
  if (*value == '"') value++;
  char* end;
  long long v = strtoll(value, &end, 10);
  return end == value ? fallback : v;
}

/* The number of elements of the array at `value` (0 when absent). */
static inline int json_array_len(const char* value)
{
  const char* p = json_ws(value);
  if (!p || *p != '[') return 0;
  p = json_ws(p + 1);
  int n = 0;
  while (p && *p && *p != ']') {
    p = json_ws(json_value_end(p));
    n++;
    if (p && *p == ',') p = json_ws(p + 1);
  }
  return n;
}

/* A config parameter's string_value, from the model configuration JSON
 * ("parameters": {key: {"string_value": ...}}), into `out`; 0 when found. */
static inline int config_parameter(
    const char* config, const char* key, char* out, size_t cap)
{
  const char* param = json_member(json_member(config, "parameters"), key);
  return json_string(json_member(param, "string_value"), out, cap);
}

#endif
