/*-------------------------------------------------------------------------
 *
 * units_offline.c
 *	  How much room compression units cost a document, offline: each
 *	  document compressed whole (as standard TOAST does) against the same
 *	  bytes cut into units compressed apart, and into units that see the
 *	  bytes before them (a history, a dictionary, a primer).  No server
 *	  involved; the units are slices of the document's raw jsonb bytes,
 *	  not the toaster's parts, so the figures bound what a layout could
 *	  reach rather than measure one.
 *
 * Input, on stdin: one document a line, "id<TAB>hex of its raw jsonb
 * bytes", as this gives it for a table whose column is STORAGE EXTERNAL
 * (uncompressed TOAST values hold the raw bytes):
 *
 *	psql -XAt -c "COPY (SELECT chunk_id, string_agg(encode(chunk_data, 'hex'),
 *		'' ORDER BY chunk_seq) FROM pg_toast.pg_toast_N GROUP BY chunk_id)
 *		TO STDOUT" > docs.hex
 *
 * Build against a PostgreSQL installation (pglz from libpgcommon) and
 * liblz4:
 *
 *	cc -O2 -I$(pg_config --includedir-server) -o units_offline \
 *		bench/C/units_offline.c $(pg_config --libdir)/libpgcommon.a \
 *		$(pg_config --libdir)/libpgport.a -llz4 -lm
 *
 * Usage: units_offline UNIT [MIN_STORED] < docs.hex
 * prints, for the documents whose whole lz4 form takes MIN_STORED bytes
 * or more (default 2000: those standard TOAST moves out of the row), each
 * layout's stored bytes against the whole documents', pglz (core's
 * default strategy) and lz4:
 *   units        slices of UNIT bytes compressed apart
 *   quarter      slices of a quarter of the document, UNIT at least and
 *                64 kB at most
 *   history      lz4: each slice with the 64 kB before it as dictionary
 *                (a read would decode every slice before it)
 *   first-unit   lz4: each slice with the document's first slice as
 *                dictionary
 *   lz4hc        lz4: slices of UNIT bytes compressed apart by LZ4HC at
 *                its lowest level (2), which any lz4 decoder reads; and
 *                the documents whole the same way
 *   primed-prev  pglz: each slice after the 4 kB before it (pglz's
 *                window), counted as the bytes the pair takes more than
 *                the 4 kB alone
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * bench/C/units_offline.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include <lz4.h>
#include <lz4hc.h>

#include "common/pg_lzcompress.h"

#define MAX_DOC		(64 * 1024 * 1024)
#define MAX_UNIT	65535
#define LZ4_WINDOW	65536
#define PGLZ_WINDOW 4096

static char out[MAX_DOC + MAX_DOC / 255 + 64];

/* stored bytes of src compressed by pglz: its 4-byte header and stream */
static long
pglz_bytes(const char *src, int len)
{
	int32		n = pglz_compress(src, len, out, PGLZ_strategy_default);

	return (n < 0 ? len : n) + 4;
}

/*
 * The same by lz4, as core compresses (LZ4_compress_default()), or with
 * dict (dictlen bytes) as the bytes before src
 */
static long
lz4_bytes(const char *src, int len, const char *dict, int dictlen)
{
	int			n;

	if (dictlen == 0)
		n = LZ4_compress_default(src, out, len, sizeof(out));
	else
	{
		LZ4_stream_t *s = LZ4_createStream();

		LZ4_loadDict(s, dict, dictlen);
		n = LZ4_compress_fast_continue(s, src, out, len, sizeof(out), 1);
		LZ4_freeStream(s);
	}
	return (n <= 0 || n > len ? len : n) + 4;
}

/* The same by LZ4HC at its lowest level (the format lz4 decoders read) */
static long
lz4hc_bytes(const char *src, int len)
{
	int			n = LZ4_compress_HC(src, out, len, sizeof(out), 2);

	return (n <= 0 || n > len ? len : n) + 4;
}

static int
hexval(int c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

int
main(int argc, char **argv)
{
	int			unit;
	long		min_stored = 2000;
	static char line[2 * MAX_DOC + 64];
	static char doc[MAX_DOC];
	static char pair[PGLZ_WINDOW + MAX_UNIT];
	long		docs = 0;
	long		whole_p = 0,
				whole_l = 0,
				units_p = 0,
				units_l = 0,
				quarter_p = 0,
				quarter_l = 0,
				history_l = 0,
				first_l = 0,
				primed_p = 0,
				units_hc = 0,
				whole_hc = 0;

	if (argc < 2 || (unit = atoi(argv[1])) <= 0 || unit > MAX_UNIT)
	{
		fprintf(stderr, "usage: %s UNIT [MIN_STORED] < docs.hex\n", argv[0]);
		return 2;
	}
	if (argc > 2)
		min_stored = atol(argv[2]);

	while (fgets(line, sizeof(line), stdin))
	{
		char	   *p = strchr(line, '\t');
		int			len = 0;
		int			quarter;

		if (p == NULL)
			continue;
		for (p++; p[0] && p[1] && p[0] != '\n' && len < MAX_DOC; p += 2)
			doc[len++] = (char) (hexval(p[0]) * 16 + hexval(p[1]));
		if (lz4_bytes(doc, len, NULL, 0) < min_stored)
			continue;
		docs++;
		whole_p += pglz_bytes(doc, len);
		whole_l += lz4_bytes(doc, len, NULL, 0);
		whole_hc += lz4hc_bytes(doc, len);

		quarter = Min(Max(len / 4, unit), MAX_UNIT);
		for (int at = 0; at < len; at += quarter)
		{
			int			n = Min(quarter, len - at);

			quarter_p += pglz_bytes(doc + at, n);
			quarter_l += lz4_bytes(doc + at, n, NULL, 0);
		}

		for (int at = 0; at < len; at += unit)
		{
			int			n = Min(unit, len - at);
			int			back = Min(at, LZ4_WINDOW);

			units_p += pglz_bytes(doc + at, n);
			units_l += lz4_bytes(doc + at, n, NULL, 0);
			units_hc += lz4hc_bytes(doc + at, n);
			history_l += lz4_bytes(doc + at, n, doc + at - back, back);
			first_l += lz4_bytes(doc + at, n, doc, at == 0 ? 0 : Min(unit, len));
			if (at == 0)
				primed_p += pglz_bytes(doc, n);
			else
			{
				memcpy(pair, doc + at - PGLZ_WINDOW, PGLZ_WINDOW);
				memcpy(pair + PGLZ_WINDOW, doc + at, n);
				primed_p += pglz_bytes(pair, PGLZ_WINDOW + n) -
					pglz_bytes(pair, PGLZ_WINDOW) + 4;
			}
		}
	}
	if (docs == 0)
	{
		printf("no document of %ld stored bytes or more\n", min_stored);
		return 0;
	}
	printf("documents %ld, whole: pglz %ld, lz4 %ld bytes\n", docs, whole_p, whole_l);
	printf("units of %d:   pglz %.3fx  lz4 %.3fx\n", unit,
		   (double) units_p / whole_p, (double) units_l / whole_l);
	printf("quarter:       pglz %.3fx  lz4 %.3fx\n",
		   (double) quarter_p / whole_p, (double) quarter_l / whole_l);
	printf("history:                   lz4 %.3fx\n", (double) history_l / whole_l);
	printf("first-unit:                lz4 %.3fx\n", (double) first_l / whole_l);
	printf("primed-prev:   pglz %.3fx\n", (double) primed_p / whole_p);
	printf("lz4hc:                     lz4 %.3fx (whole documents %.3fx)\n",
		   (double) units_hc / whole_l, (double) whole_hc / whole_l);
	return 0;
}
