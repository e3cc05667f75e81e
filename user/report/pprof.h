/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pprof.h - a small protocol-buffers encoder, enough for profile.proto
 * (github.com/google/pprof/proto/profile.proto): varints, length-
 * delimited fields and packed repeated integers, into a growing buffer.
 *
 * kcc writes pprof with this rather than protobuf-c: the message is
 * write-only, flat and small, so the encoder is shorter than the glue a
 * generated protobuf-c file needs, and the build needs neither protoc-c
 * nor a runtime library.  gzip is zlib's.
 */
#ifndef KCC_PPROF_H
#define KCC_PPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stream.h"

void pb_varint(struct sbuf *b, uint64_t v);
void pb_uint(struct sbuf *b, uint32_t field, uint64_t v);
void pb_bytes(struct sbuf *b, uint32_t field, const void *p, size_t len);
/* A nested message: @msg's bytes as field @field. */
void pb_msg(struct sbuf *b, uint32_t field, const struct sbuf *msg);
void pb_packed(struct sbuf *b, uint32_t field, const uint64_t *v, size_t n);

/* @s as a JSON string, quoted. */
void json_str(const char *s, FILE *out);

/* gzip @len bytes at @p to @out: 0 or -EIO / -ENOMEM. */
int gzip_write(const void *p, size_t len, FILE *out);

struct report;

/* kcc report --format pprof: @r as a gzipped profile.proto. */
int report__pprof(struct report *r, FILE *out);
/*
 * The sample types report__pprof() writes, as the sample_type_config
 * JSON of Pyroscope's /ingest (format=pprof): units, aggregation "sum",
 * display name, and "sampled" false (every value is a total, never a
 * count to scale).  Returns 0 or -EIO.
 */
int report__pprof_types(struct report *r, FILE *out);

#endif /* KCC_PPROF_H */
