/*-------------------------------------------------------------------------
 *
 * crc32c.c
 *	  CRC-32C of long inputs, the value core's COMP_CRC32C() gives, faster
 *	  on x86-64.
 *
 * Every read of a part checks its content against the CRC-32C its entry
 * holds, so the check weighs on whole-document reads.  The CPU's crc32
 * instruction takes three cycles but can start
 * every cycle; core's loop feeds one chain of them and waits for each.
 * Here the input is cut into three blocks whose CRCs are computed side by
 * side and then joined.  The CRC register is linear: the register after A
 * then B is the register after A carried over len(B) zero bytes, xor the
 * register after B started from zero.  Carrying over n bytes multiplies by
 * x^(8n) modulo the polynomial, done as one carry-less multiplication by
 * x^(8n - 33) (pclmulqdq, in the bit-reflected order the CRC uses, whose
 * product comes out one bit up) and one crc32 instruction on the 64-bit
 * product (which multiplies by x^32 and reduces).
 *
 * Elsewhere (another architecture, a CPU without pclmulqdq, short inputs)
 * this is core's COMP_CRC32C(); and where core chose its AVX-512 version,
 * which folds 64 bytes at a time with vector carry-less multiplications
 * and is faster than three blocks of crc32 instructions.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/support/crc32c.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "support/crc32c.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define JT_CRC32C_THREE_WAY
#include <nmmintrin.h>
#include <wmmintrin.h>
#endif

#ifdef JT_CRC32C_THREE_WAY

/*
 * Bytes of each of the three blocks: long blocks while the input lasts,
 * then short ones, then core's loop for the rest.  Joining costs two
 * multiplications and two crc32 steps, which short blocks already repay.
 */
#define LONG_BLOCK		512
#define SHORT_BLOCK		128

/* The reflected CRC-32C polynomial without its x^32 term. */
#define CRC32C_POLY_REFLECTED	0x82F63B78

static bool three_way_checked = false;
static bool three_way_usable = false;	/* the CPU can */
static bool three_way_preferred = false;	/* and core has nothing faster */
static uint32 long_block_constant;
static uint32 short_block_constant;

/* x^n modulo the polynomial, bit-reflected (x^0 is the top bit). */
static uint32
x_power_mod(uint32 n)
{
	uint32		r = 0x80000000;

	while (n-- > 0)
		r = (r >> 1) ^ ((r & 1) ? CRC32C_POLY_REFLECTED : 0);
	return r;
}

static void
three_way_check(void)
{
	three_way_usable = __builtin_cpu_supports("sse4.2") &&
		__builtin_cpu_supports("pclmul");
	three_way_preferred = three_way_usable;
#ifdef USE_AVX512_CRC32C_WITH_RUNTIME_CHECK
	{
		pg_crc32c	probe = 0;

		/* the first call through core's pointer makes its choice */
		probe = pg_comp_crc32c(probe, &probe, sizeof(probe));
		if (pg_comp_crc32c == pg_comp_crc32c_avx512)
			three_way_preferred = false;
	}
#endif
	long_block_constant = x_power_mod(8 * LONG_BLOCK - 33);
	short_block_constant = x_power_mod(8 * SHORT_BLOCK - 33);
	three_way_checked = true;
}

/* The register crc carried over the zero bytes constant stands for. */
__attribute__((target("sse4.2,pclmul")))
static inline uint32
carry_over(uint32 crc, uint32 constant)
{
	__m128i		product;

	product = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int) crc),
								   _mm_cvtsi32_si128((int) constant), 0);
	return (uint32) _mm_crc32_u64(0, (uint64) _mm_cvtsi128_si64(product));
}

static inline uint64
load64(const unsigned char *p)
{
	uint64		v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * Advance crc over the input in rounds of three blocks of block bytes
 * while at least one round is left; *p and *len move past what was taken.
 */
__attribute__((target("sse4.2,pclmul")))
static inline uint32
three_blocks(uint32 crc, const unsigned char **p, size_t *len, size_t block,
			 uint32 constant)
{
	while (*len >= 3 * block)
	{
		const unsigned char *a = *p;
		uint64		c0 = crc;
		uint64		c1 = 0;
		uint64		c2 = 0;

		for (size_t i = 0; i < block; i += 8)
		{
			c0 = _mm_crc32_u64(c0, load64(a + i));
			c1 = _mm_crc32_u64(c1, load64(a + block + i));
			c2 = _mm_crc32_u64(c2, load64(a + 2 * block + i));
		}
		crc = carry_over((uint32) c0, constant) ^ (uint32) c1;
		crc = carry_over(crc, constant) ^ (uint32) c2;
		*p += 3 * block;
		*len -= 3 * block;
	}
	return crc;
}

__attribute__((target("sse4.2,pclmul")))
static uint32
three_way(uint32 crc, const unsigned char *p, size_t len)
{
	crc = three_blocks(crc, &p, &len, LONG_BLOCK, long_block_constant);
	crc = three_blocks(crc, &p, &len, SHORT_BLOCK, short_block_constant);
	COMP_CRC32C(crc, p, len);
	return crc;
}

#endif							/* JT_CRC32C_THREE_WAY */

/*
 * COMP_CRC32C(crc, data, len), returning the register: the caller does
 * INIT_CRC32C() and FIN_CRC32C() as with core's.
 */
pg_crc32c
jt_comp_crc32c(pg_crc32c crc, const void *data, size_t len)
{
#ifdef JT_CRC32C_THREE_WAY
	if (len >= 3 * SHORT_BLOCK)
	{
		if (unlikely(!three_way_checked))
			three_way_check();
		if (three_way_preferred)
			return three_way(crc, (const unsigned char *) data, len);
	}
#endif
	COMP_CRC32C(crc, data, len);
	return crc;
}

/*
 * The three-block computation wherever the CPU can do it, whether
 * jt_comp_crc32c() takes it or not: for tests, so that it is checked on
 * every machine that has it.
 */
pg_crc32c
jt_comp_crc32c_three_way(pg_crc32c crc, const void *data, size_t len)
{
#ifdef JT_CRC32C_THREE_WAY
	if (unlikely(!three_way_checked))
		three_way_check();
	if (three_way_usable)
		return three_way(crc, (const unsigned char *) data, len);
#endif
	COMP_CRC32C(crc, data, len);
	return crc;
}
