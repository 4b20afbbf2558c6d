/*-------------------------------------------------------------------------
 *
 * pglz_strategy.c
 *	  Compress stored TOAST values again with several pglz strategies and
 *	  print the sizes and times, to choose the toaster's (part_write.c).
 *
 * Each file named on the command line holds one value's stored stream as
 * its chunks concatenate: a 4-byte header (raw size and method) and the
 * compressed bytes, or the raw bytes if the value was stored uncompressed
 * (then its size is given as "raw:<file>").  Built against a server's
 * libpgcommon by pglz-strategy.sh.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * tools/pglz-strategy/pglz_strategy.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include <time.h>

#include "common/pg_lzcompress.h"

typedef struct Candidate
{
	const char *name;
	int32		match_size_good;
	int32		match_size_drop;
	int64		stored;
	double		usec;
	double		decompress_usec;
} Candidate;

static Candidate candidates[] = {
	{"default (128/10)", 128, 10},
	{"toaster (32/20)", 32, 20},
	{"16/50", 16, 50},
};

#define NCANDIDATES lengthof(candidates)

static double
now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static char *
read_file(const char *path, int32 *len)
{
	FILE	   *f = fopen(path, "rb");
	char	   *buf;
	long		size;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0)
	{
		fprintf(stderr, "cannot read %s\n", path);
		exit(1);
	}
	rewind(f);
	buf = pg_malloc(size + 1);
	if (fread(buf, 1, size, f) != (size_t) size)
	{
		fprintf(stderr, "cannot read %s\n", path);
		exit(1);
	}
	fclose(f);
	*len = (int32) size;
	return buf;
}

/* The raw bytes of one stored value. */
static char *
raw_value(const char *arg, int32 *rawlen)
{
	int32		len;
	char	   *stored;
	char	   *raw;
	uint32		header;

	if (strncmp(arg, "raw:", 4) == 0)
		return read_file(arg + 4, rawlen);
	stored = read_file(arg, &len);
	if (len < 4)
	{
		fprintf(stderr, "%s: too short\n", arg);
		exit(1);
	}
	memcpy(&header, stored, 4);
	*rawlen = header & 0x3FFFFFFF;
	if ((header >> 30) != 0)
	{
		fprintf(stderr, "%s: not pglz\n", arg);
		exit(1);
	}
	raw = pg_malloc(*rawlen);
	if (pglz_decompress(stored + 4, len - 4, raw, *rawlen, true) != *rawlen)
	{
		fprintf(stderr, "%s: corrupt pglz stream\n", arg);
		exit(1);
	}
	pg_free(stored);
	return raw;
}

int
main(int argc, char **argv)
{
	int64		rawtotal = 0;
	int			nvalues = argc - 1;

	for (int a = 1; a < argc; a++)
	{
		int32		rawlen;
		char	   *raw = raw_value(argv[a], &rawlen);
		char	   *out = pg_malloc(PGLZ_MAX_OUTPUT(rawlen));
		char	   *back = pg_malloc(rawlen);
		/* repeat small values, so that each is timed over ~1 ms */
		int			reps = Max(1, 4 * 1024 * 1024 / Max(rawlen, 1) / 16);

		rawtotal += rawlen;
		for (int c = 0; c < NCANDIDATES; c++)
		{
			PGLZ_Strategy strategy = *PGLZ_strategy_default;
			int32		len = 0;
			double		start;

			strategy.match_size_good = candidates[c].match_size_good;
			strategy.match_size_drop = candidates[c].match_size_drop;
			start = now_usec();
			for (int r = 0; r < reps; r++)
				len = pglz_compress(raw, rawlen, out, &strategy);
			candidates[c].usec += (now_usec() - start) / reps;
			/* a value pglz gives up on is stored as it is */
			candidates[c].stored += len < 0 ? rawlen : len;
			if (len >= 0)
			{
				start = now_usec();
				for (int r = 0; r < reps; r++)
					if (pglz_decompress(out, len, back, rawlen, true) != rawlen)
					{
						fprintf(stderr, "%s: does not decompress\n", argv[a]);
						exit(1);
					}
				candidates[c].decompress_usec += (now_usec() - start) / reps;
			}
		}
		pg_free(back);
		pg_free(out);
		pg_free(raw);
	}

	printf("%d values, %lld raw bytes\n", nvalues, (long long) rawtotal);
	printf("%-18s %14s %10s %14s %10s %14s %10s\n", "strategy",
		   "stored bytes", "vs default", "compress us", "vs default",
		   "decompress us", "vs default");
	for (int c = 0; c < NCANDIDATES; c++)
		printf("%-18s %14lld %9.3fx %14.0f %9.2fx %14.0f %9.2fx\n",
			   candidates[c].name, (long long) candidates[c].stored,
			   (double) candidates[c].stored / candidates[0].stored,
			   candidates[c].usec, candidates[c].usec / candidates[0].usec,
			   candidates[c].decompress_usec,
			   candidates[c].decompress_usec / candidates[0].decompress_usec);
	return 0;
}
