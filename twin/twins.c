/* SPDX-License-Identifier: MIT */
/* The twin registry and its write-through persistence (see twins.h). */
#include "twins.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "routes.h"
#include "error.h"
#include "ids.h"
#include "log.h"
#include "statedb.h"

#define TBX_LOG_CATEGORY "twin.twins"

static void twin_free(struct tbx_twin *t)
{
	for (size_t i = 0; i < t->n_services; i++) {
		json_object_put(t->services[i].state);
		json_object_put(t->services[i].log);
	}
	free(t->services);
	json_object_put(t->metadata);
	free(t->client_base_url);
	free(t);
}

void tbx_twins_free(struct tbx_twins *twins)
{
	if (!twins)
		return;
	while (twins->head) {
		struct tbx_twin *next = twins->head->next;
		twin_free(twins->head);
		twins->head = next;
	}
	free(twins);
}

static struct tbx_twin *twin_alloc(struct tbx_twins *twins, struct json_object *service_names)
{
	struct tbx_twin *t = calloc(1, sizeof(*t));
	size_t n = json_object_array_length(service_names);

	if (!t || !(t->services = calloc(n ? n : 1, sizeof(*t->services)))) {
		free(t);
		return NULL;
	}
	t->owner = twins;
	for (size_t i = 0; i < n; i++) {
		struct tbx_service *s = &t->services[t->n_services++];
		snprintf(s->name, sizeof(s->name), "%s",
			 json_object_get_string(json_object_array_get_idx(service_names, i)));
		s->twin = t;
		s->route = tbx_routes_service(twins->cfg, s->name);
		s->state = json_object_new_object();
		s->log = json_object_new_array();
		s->next_request_id = 1;
	}
	return t;
}

static void link_twin(struct tbx_twins *twins, struct tbx_twin *t)
{
	struct tbx_twin **p = &twins->head;

	while (*p) /* keep creation order for listings */
		p = &(*p)->next;
	*p = t;
	twins->count++;
}

int tbx_twin_save(struct tbx_twin *t)
{
	struct json_object *rec = json_object_new_object(), *names = json_object_new_array();
	int rc;

	for (size_t i = 0; i < t->n_services; i++)
		json_object_array_add(names, json_object_new_string(t->services[i].name));
	json_object_object_add(rec, "environment_id", json_object_new_string(t->environment));
	json_object_object_add(rec, "password", json_object_new_string(t->password));
	json_object_object_add(rec, "policy", json_object_new_string(t->policy));
	json_object_object_add(rec, "created_ms", json_object_new_int64(t->created_ms));
	json_object_object_add(rec, "expires_ms", json_object_new_int64(t->expires_ms));
	json_object_object_add(rec, "metadata", json_object_get(t->metadata));
	if (t->client_base_url)
		json_object_object_add(rec, "client_base_url", json_object_new_string(t->client_base_url));
	json_object_object_add(rec, "services", names);
	rc = tbx_statedb_put_twin(t->owner->db, t->id, json_object_to_json_string(rec));
	json_object_put(rec);
	return rc;
}

static const char *get_str(struct json_object *o, const char *key)
{
	struct json_object *v;
	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

static int64_t get_i64(struct json_object *o, const char *key)
{
	struct json_object *v;
	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
}

static void load_twin(void *arg, const char *id, const char *json)
{
	struct tbx_twins *twins = arg;
	struct json_object *rec = json_tokener_parse(json), *names, *meta;
	struct tbx_twin *t;

	if (!rec || !json_object_object_get_ex(rec, "services", &names) ||
	    !(t = twin_alloc(twins, names))) {
		tbx_log_warn("twin %s: unreadable record skipped", id);
		json_object_put(rec);
		return;
	}
	snprintf(t->id, sizeof(t->id), "%s", id);
	snprintf(t->environment, sizeof(t->environment), "%s", get_str(rec, "environment_id") ? get_str(rec, "environment_id") : "");
	snprintf(t->password, sizeof(t->password), "%s", get_str(rec, "password") ? get_str(rec, "password") : "");
	snprintf(t->policy, sizeof(t->policy), "%s", get_str(rec, "policy") ? get_str(rec, "policy") : "strict");
	t->created_ms = get_i64(rec, "created_ms");
	t->expires_ms = get_i64(rec, "expires_ms");
	t->metadata = json_object_object_get_ex(rec, "metadata", &meta) && meta
			      ? json_object_get(meta) : json_object_new_object();
	if (get_str(rec, "client_base_url"))
		t->client_base_url = strdup(get_str(rec, "client_base_url"));
	for (size_t i = 0; i < t->n_services; i++)
		if (!t->services[i].route)
			tbx_log_warn("twin %s: service %s is no longer in the routes file", id,
				     t->services[i].name);
	json_object_put(rec);
	link_twin(twins, t);
}

static void load_object(void *arg, const char *twin, const char *service, const char *kind,
			const char *id, const char *json)
{
	struct tbx_twin *t = tbx_twins_find(arg, twin);
	struct tbx_service *s = t ? tbx_twin_service(t, service) : NULL;
	struct json_object *obj = json_tokener_parse(json);

	if (!s || !obj) {
		json_object_put(obj);
		return;
	}
	json_object_object_add(tbx_service_collection(s, kind), id, obj);
}

static void load_request(void *arg, const char *twin, const char *service, int64_t id,
			 const char *json)
{
	struct tbx_twin *t = tbx_twins_find(arg, twin);
	struct tbx_service *s = t ? tbx_twin_service(t, service) : NULL;
	struct json_object *entry = json_tokener_parse(json);

	if (!s || !entry) {
		json_object_put(entry);
		return;
	}
	json_object_array_add(s->log, entry);
	if (id >= s->next_request_id)
		s->next_request_id = id + 1;
}

int tbx_twins_new(const struct tbx_routes *cfg, struct tbx_statedb *db, struct tbx_twins **out)
{
	struct tbx_twins *twins = calloc(1, sizeof(*twins));
	int rc;

	if (!twins)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	twins->cfg = cfg;
	twins->db = db;
	if (db && (rc = tbx_statedb_load(db, load_twin, load_object, load_request, twins)) < 0) {
		tbx_twins_free(twins);
		return rc;
	}
	*out = twins;
	return 0;
}

int tbx_twins_create(struct tbx_twins *twins, const char *env, int64_t ttl_minutes,
		     struct json_object *metadata, const char *policy, struct tbx_twin **out)
{
	struct json_object *names = tbx_routes_environment(twins->cfg, env);
	struct tbx_twin *t;

	if (!names)
		return tbx_error_set(TBX_ENOENT, "no environment \"%s\" in the routes file", env);
	if (strlen(env) >= sizeof(t->environment)) {
		json_object_put(names);
		return tbx_error_set(TBX_EINVAL, "environment id too long");
	}
	t = twin_alloc(twins, names);
	json_object_put(names);
	if (!t)
		return tbx_error_set(TBX_ENOMEM, "out of memory");
	/* The twin id is the gateway capability: 128+ bits of randomness. */
	tbx_id_random(t->id, sizeof(t->id), "sbx_", 24);
	tbx_id_random(t->password, sizeof(t->password), "", 32);
	snprintf(t->environment, sizeof(t->environment), "%s", env);
	snprintf(t->policy, sizeof(t->policy), "%s", policy ? policy : twins->cfg->policy);
	t->created_ms = tbx_now_ms();
	t->expires_ms = ttl_minutes > 0 ? t->created_ms + ttl_minutes * 60000 : 0;
	t->metadata = metadata ? json_object_get(metadata) : json_object_new_object();
	link_twin(twins, t);
	tbx_twin_save(t);
	*out = t;
	return 0;
}

struct tbx_twin *tbx_twins_find(struct tbx_twins *twins, const char *id)
{
	for (struct tbx_twin *t = twins->head; t; t = t->next)
		if (strcmp(t->id, id) == 0)
			return t;
	return NULL;
}

void tbx_twins_remove(struct tbx_twins *twins, struct tbx_twin *twin)
{
	for (struct tbx_twin **p = &twins->head; *p; p = &(*p)->next) {
		if (*p == twin) {
			*p = twin->next;
			twins->count--;
			tbx_statedb_delete_twin(twins->db, twin->id);
			twin_free(twin);
			return;
		}
	}
}

struct tbx_twin *tbx_twins_expired(struct tbx_twins *twins, int64_t now_ms)
{
	for (struct tbx_twin *t = twins->head; t; t = t->next)
		if (t->expires_ms && t->expires_ms <= now_ms)
			return t;
	return NULL;
}

struct tbx_service *tbx_twin_service(struct tbx_twin *t, const char *name)
{
	for (size_t i = 0; i < t->n_services; i++)
		if (strcmp(t->services[i].name, name) == 0)
			return &t->services[i];
	return NULL;
}

struct tbx_service *tbx_twin_service_for_host(struct tbx_twin *t, const char *host)
{
	for (size_t i = 0; i < t->n_services; i++) {
		const struct tbx_route_service *r = t->services[i].route;
		for (size_t j = 0; r && j < r->n_hosts; j++)
			if (strcmp(r->hosts[j], host) == 0)
				return &t->services[i];
	}
	return NULL;
}

struct json_object *tbx_service_collection(struct tbx_service *svc, const char *kind)
{
	struct json_object *c;

	if (!json_object_object_get_ex(svc->state, kind, &c)) {
		c = json_object_new_object();
		json_object_object_add(svc->state, kind, c);
	}
	return c;
}

struct json_object *tbx_service_get(struct tbx_service *svc, const char *kind, const char *id)
{
	struct json_object *c, *o;

	if (json_object_object_get_ex(svc->state, kind, &c) && json_object_object_get_ex(c, id, &o))
		return o;
	return NULL;
}

int tbx_service_put(struct tbx_service *svc, const char *kind, const char *id,
		    struct json_object *obj)
{
	struct json_object *c = tbx_service_collection(svc, kind), *old = NULL;

	json_object_object_get_ex(c, id, &old);
	if (old != obj)
		json_object_object_add(c, id, obj); /* replaces in place, keeping the order */
	return tbx_statedb_put_object(svc->twin->owner->db, svc->twin->id, svc->name, kind, id,
				      json_object_to_json_string(obj));
}

int tbx_service_delete(struct tbx_service *svc, const char *kind, const char *id)
{
	json_object_object_del(tbx_service_collection(svc, kind), id);
	return tbx_statedb_delete_object(svc->twin->owner->db, svc->twin->id, svc->name, kind, id);
}

void tbx_service_reset(struct tbx_service *svc)
{
	json_object_put(svc->state);
	svc->state = json_object_new_object();
	tbx_statedb_clear_objects(svc->twin->owner->db, svc->twin->id, svc->name);
}

int64_t tbx_service_log_append(struct tbx_service *svc, struct json_object *entry)
{
	int64_t id = svc->next_request_id++;

	json_object_object_add(entry, "id", json_object_new_int64(id));
	json_object_array_add(svc->log, entry);
	tbx_statedb_add_request(svc->twin->owner->db, svc->twin->id, svc->name, id,
				json_object_to_json_string(entry));
	return id;
}
