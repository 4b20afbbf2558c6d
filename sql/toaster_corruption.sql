--
-- Damaged parts of values stored by the jsonb toaster (patched servers
-- only): reading a skeleton whose part has a damaged container layout
-- raises an ERROR for data corruption, never crashes, and never returns a
-- wrong answer silently; whether the whole value is flattened, one
-- container of it, or one element found through the directory, and in
-- particular when the parts of a wide container are glued back together.
--
-- A part is an ordinary jsonb value in the table's TOAST relation.  The
-- test module forges a copy of a stored skeleton whose directory entry for
-- one part points to the chunks of a bytea instead (kept uncompressed in
-- the same TOAST relation: another column of the same table), whose bytes
-- are the genuine part's with one thing damaged.  Reads check a part's raw
-- size and root header against its directory entry but do not recompute
-- its content hash, so damage to its JEntries reaches the code that reads
-- them.  The damage is done to the JEntries of the part's root container,
-- which is what the code gluing parts together reads; bytes are written
-- little-endian, as in corruption.sql.
--
-- (the extension may be left by an earlier file, or not: no NOTICE either way)
-- The trees of this file's documents stay in the row (format version 6),
-- whose directories it reads and forges; tree_outside.sql has version 7.
SET jsonb_toaster.format_version = 6;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster;
CREATE EXTENSION IF NOT EXISTS jsonb_toaster_test;
RESET client_min_messages;

-- Run a query, report its result or its error in a stable form: SQLSTATE
-- and message with numbers and TOAST relation names masked.
CREATE FUNCTION try(query text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  result text;
BEGIN
  EXECUTE query INTO result;
  RETURN 'ok: ' || coalesce(left(result, 30), 'NULL');
EXCEPTION WHEN OTHERS THEN
  DECLARE
    detail text;
  BEGIN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
    RETURN SQLSTATE || ': ' ||
      regexp_replace(regexp_replace(SQLERRM || coalesce(' (' || nullif(detail, '') || ')', ''),
                                    'pg_toast_[0-9]+', 'pg_toast_N', 'g'),
                     '\m[0-9]+\M', 'N', 'g');
  END;
END $$;

-- The 4-byte little-endian word at byte pos of b, and b with it replaced.
CREATE FUNCTION word(b bytea, pos int) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT get_byte(b, pos)::bigint | (get_byte(b, pos + 1)::bigint << 8) |
         (get_byte(b, pos + 2)::bigint << 16) | (get_byte(b, pos + 3)::bigint << 24)
$$;
CREATE FUNCTION set_word(b bytea, pos int, v bigint) RETURNS bytea LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT overlay(b PLACING set_byte(set_byte(set_byte(set_byte('\x00000000'::bytea,
           0, (v & 255)::int), 1, ((v >> 8) & 255)::int), 2, ((v >> 16) & 255)::int), 3, ((v >> 24) & 255)::int)
         FROM pos + 1 FOR 4)
$$;
-- JEntry k of the root container of a jsonb payload, and its end offset in
-- the data area (lengths added back to the nearest stored end offset).
CREATE FUNCTION jentry(b bytea, k int) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT AS $$
  SELECT word(b, 4 + 4 * k)
$$;
CREATE FUNCTION entry_end(b bytea, k int) RETURNS bigint LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  s bigint := 0;
  e bigint;
BEGIN
  LOOP
    e := jentry(b, k);
    s := s + (e & x'0FFFFFFF'::bigint);
    EXIT WHEN e & x'80000000'::bigint <> 0 OR k = 0;
    k := k - 1;
  END LOOP;
  RETURN s;
END $$;

-- Wide documents, split into many parts: arrays of 5000 numerics, of
-- strings of odd lengths (so that parts start out of step with the 4-byte
-- alignment of the glued container), of small objects, an array of mixed
-- values that is the whole document (the root leaves the row), an object
-- of 5000 keys with mixed values, and such an object as the whole
-- document ("root object", which jsonb_set(), #-, - and || change one part
-- of).  Each but the roots has a short field "k" that stays in the
-- skeleton, and the wide container "w".
SET jsonb_toaster.range_size = 1024;
CREATE TABLE orig (doc text PRIMARY KEY, jb jsonb);
INSERT INTO orig
SELECT 'numerics', jsonb_build_object('k', 'a short value',
  'w', (SELECT jsonb_agg(i * 1.25) FROM generate_series(0, 4999) i))
UNION ALL
SELECT 'strings', jsonb_build_object('k', 'a short value',
  'w', (SELECT jsonb_agg(left(md5(i::text), 1 + i % 7)) FROM generate_series(0, 4999) i))
UNION ALL
SELECT 'objects', jsonb_build_object('k', 'a short value',
  'w', (SELECT jsonb_agg(jsonb_build_object('i', i, 's', repeat('x', i % 5))) FROM generate_series(0, 4999) i))
UNION ALL
SELECT 'root', (SELECT jsonb_agg(CASE i % 4 WHEN 0 THEN to_jsonb(i * 0.5) WHEN 1 THEN to_jsonb(repeat('y', i % 3))
                                   WHEN 2 THEN to_jsonb(i % 3 = 0) ELSE jsonb_build_object('n', i) END)
                FROM generate_series(0, 4999) i)
UNION ALL
SELECT 'object', jsonb_build_object('k', 'a short value',
  'w', (SELECT jsonb_object_agg('k' || i, CASE i % 4 WHEN 0 THEN to_jsonb(i * 1.5) WHEN 1 THEN to_jsonb(repeat('v', i % 3))
                                            WHEN 2 THEN 'null'::jsonb ELSE jsonb_build_object('n', i) END)
        FROM generate_series(0, 4999) i))
UNION ALL
SELECT 'root object', (SELECT jsonb_object_agg('k' || i, CASE i % 4 WHEN 0 THEN to_jsonb(i * 1.5) WHEN 1 THEN to_jsonb(repeat('v', i % 3))
                                                WHEN 2 THEN 'null'::jsonb ELSE jsonb_build_object('n', i) END)
                       FROM generate_series(0, 4999) i);

-- The stored documents and, in the same table so in the same TOAST
-- relation, the bytes that stand for damaged parts.
CREATE TABLE w (name text PRIMARY KEY, jb jsonb, b bytea);
ALTER TABLE w ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
ALTER TABLE w ALTER COLUMN b SET STORAGE EXTERNAL;
INSERT INTO w (name, jb) SELECT doc, jb FROM orig;
RESET jsonb_toaster.range_size;
SELECT name, s.form, s.parts > 5 AS many_parts,
  jt_test_flat_bytes(w.jb) = jt_test_flat_bytes(o.jb) AS same_bytes
FROM w JOIN orig o ON o.doc = w.name, jsonb_toaster_storage(w.jb) s ORDER BY 1;

-- The part damaged in each document: the widest part of the wide
-- container after its first, so that it is glued after other parts.  In
-- it, v is the index of the first value's JEntry (the count, in an object),
-- and the JEntries damaged are "plain", the 6th value's (not at a stride
-- point), "stride", the first value's at a stride point (which holds an end
-- offset), and "last", the part's last.
CREATE TABLE target AS
SELECT doc, partno, first_elem, count, v, v + 5 + ((v + 5) % 32 = 0)::int AS plain,
  (v / 32 + 1) * 32 AS stride, v + count - 1 AS last,
  jt_test_part_bytes(jb, partno::int) AS b
FROM (
  SELECT w.name AS doc, w.jb, p.partno, p.count,
    sum(p.count) OVER (PARTITION BY w.name ORDER BY p.partno) - p.count AS first_elem,
    CASE WHEN p.kind = 'object' THEN p.count ELSE 0 END AS v,
    row_number() OVER (PARTITION BY w.name ORDER BY p.range = 0, p.count DESC, p.partno) AS pick
  FROM w, LATERAL (SELECT *, ordinality - 1 AS partno FROM jsonb_toaster_parts(w.jb) WITH ORDINALITY) p
  WHERE p.path IN ('{w}', '{}')
) q
WHERE pick = 1;
-- the bytes read are the part its directory entry describes
SELECT t.doc, first_elem > 0 AS not_first, plain < stride AND stride < last AS entries_distinct,
  (word(t.b, 0) & x'0FFFFFFF'::bigint) = t.count AS count_ok,
  octet_length(t.b) + 4 = p.raw_size AS size_ok
FROM target t JOIN w ON w.name = t.doc,
  LATERAL (SELECT raw_size FROM jsonb_toaster_parts(w.jb) WITH ORDINALITY o WHERE o.ordinality = t.partno + 1) p
ORDER BY 1;

-- The damage done to the part, and the entry the accessors then look up.
-- "right offset" stores the entry's true end offset: PostgreSQL's reader
-- accepts an end offset anywhere, but its writer, whose layout parts
-- have, puts one only at stride points, so either an ERROR or the right
-- answer is correct there.  "type 7 at a key" is for the object only.
CREATE TABLE cases (ord int, kase text, at text);
INSERT INTO cases VALUES
  (1, 'intact', 'stride'),
  (2, 'type 6 at a plain entry', 'plain'),
  (3, 'type 7 at a plain entry', 'plain'),
  (4, 'type 6 at a stride entry', 'stride'),
  (5, 'type 7 at a stride entry', 'stride'),
  (6, 'type 7 at a key', 'plain'),
  (7, 'offset flag at a plain entry', 'plain'),
  (8, 'offset flag at a plain entry, right offset', 'plain'),
  (9, 'stride offset before the previous end', 'stride'),
  (10, 'stride offset past the data', 'stride'),
  (11, 'length past the data', 'plain'),
  (12, 'last length one too long', 'last'),
  (13, 'count one less', 'plain'),
  (14, 'count one more', 'plain'),
  (15, 'truncated in the JEntries', 'plain'),
  (16, 'truncated by one byte', 'last'),
  (17, 'last length one too short', 'last');

CREATE FUNCTION damage(t target, kase text) RETURNS bytea LANGUAGE plpgsql AS $$
DECLARE
  b bytea := t.b;
  nentries int := t.v + t.count;
  datalen bigint := length(b) - 4 - 4 * nentries;
  typebits bigint := x'70000000'::bigint;
  offbit bigint := x'80000000'::bigint;
  offlen bigint := x'0FFFFFFF'::bigint;
BEGIN
  RETURN CASE kase
    WHEN 'intact' THEN b
    WHEN 'type 6 at a plain entry' THEN
      set_word(b, 4 + 4 * t.plain, (jentry(b, t.plain) & ~typebits) | x'60000000'::bigint)
    WHEN 'type 7 at a plain entry' THEN
      set_word(b, 4 + 4 * t.plain, jentry(b, t.plain) | typebits)
    WHEN 'type 6 at a stride entry' THEN
      set_word(b, 4 + 4 * t.stride, (jentry(b, t.stride) & ~typebits) | x'60000000'::bigint)
    WHEN 'type 7 at a stride entry' THEN
      set_word(b, 4 + 4 * t.stride, jentry(b, t.stride) | typebits)
    WHEN 'type 7 at a key' THEN
      set_word(b, 4 + 4 * 5, jentry(b, 5) | typebits)
    WHEN 'offset flag at a plain entry' THEN
      set_word(b, 4 + 4 * t.plain, jentry(b, t.plain) | offbit)
    WHEN 'offset flag at a plain entry, right offset' THEN
      set_word(b, 4 + 4 * t.plain, (jentry(b, t.plain) & typebits) | offbit | entry_end(b, t.plain))
    WHEN 'stride offset before the previous end' THEN
      set_word(b, 4 + 4 * t.stride, (jentry(b, t.stride) & ~offlen) | (entry_end(b, t.stride - 1) - 1))
    WHEN 'stride offset past the data' THEN
      set_word(b, 4 + 4 * t.stride, (jentry(b, t.stride) & ~offlen) | (datalen + 1))
    WHEN 'length past the data' THEN
      set_word(b, 4 + 4 * t.plain, jentry(b, t.plain) + x'100000'::bigint)
    WHEN 'last length one too long' THEN
      set_word(b, 4 + 4 * t.last, jentry(b, t.last) + 1)
    WHEN 'count one less' THEN
      set_word(b, 0, word(b, 0) - 1)
    WHEN 'count one more' THEN
      set_word(b, 0, word(b, 0) + 1)
    WHEN 'truncated in the JEntries' THEN
      substr(b, 1, 4 + 4 * (nentries / 2))
    WHEN 'truncated by one byte' THEN
      substr(b, 1, length(b) - 1)
    WHEN 'last length one too short' THEN
      set_word(b, 4 + 4 * t.last, jentry(b, t.last) - 1)
  END;
END $$;

-- The damaged parts' bytes, stored in TOAST uncompressed (|| makes a new
-- datum of the intact bytes, which "target" keeps compressed).  The
-- table's target is lowered now that the documents are stored, so that
-- parts shorter than 2 kB go to TOAST too.
ALTER TABLE w SET (toast_tuple_target = 128);
INSERT INTO w (name, b)
SELECT t.doc || ': ' || c.kase, damage(t, c.kase) || ''::bytea
FROM target t, cases c WHERE c.kase <> 'type 7 at a key' OR t.v > 0;
-- (out of line and uncompressed: pg_column_size() counts no header then)
SELECT count(*) AS damaged, count(*) FILTER (WHERE w.b <> t.b) AS differ,
  count(*) FILTER (WHERE pg_column_size(w.b) = octet_length(w.b)) AS in_toast
FROM w JOIN target t ON w.name LIKE t.doc || ': %';
-- What was changed, the same in every document: the words that differ
-- (the header or the JEntry named) and in them which bits (the count,
-- the type, the end offset flag, the length or offset), or where the part
-- was cut.
SELECT c.ord, c.kase, string_agg(DISTINCT coalesce(d.what, 'nothing'), '; ') AS changed
FROM cases c JOIN target t ON true JOIN w r ON r.name = t.doc || ': ' || c.kase,
  LATERAL (SELECT CASE WHEN length(r.b) = length(t.b) - 1 THEN 'last byte cut'
                    WHEN length(r.b) = 4 + 4 * ((t.v + t.count) / 2) THEN 'cut after half the JEntries'
                    WHEN length(r.b) <> length(t.b) THEN 'cut elsewhere'
                    ELSE string_agg(CASE i WHEN 0 THEN 'header' WHEN 1 + t.plain THEN 'plain' WHEN 1 + t.stride THEN 'stride'
                                      WHEN 1 + t.last THEN 'last' WHEN 1 + 5 THEN 'key 5' ELSE 'word ' || i END || ': ' ||
                                    concat_ws(', ',
                                      CASE WHEN (word(r.b, 4 * i) # word(t.b, 4 * i)) & x'70000000'::bigint <> 0 THEN 'type' END,
                                      CASE WHEN (word(r.b, 4 * i) # word(t.b, 4 * i)) & x'80000000'::bigint <> 0 THEN 'flag' END,
                                      CASE WHEN (word(r.b, 4 * i) # word(t.b, 4 * i)) & x'0FFFFFFF'::bigint <> 0
                                        THEN CASE WHEN i = 0 THEN 'count' ELSE 'length/offset' END END), '; ')
                  END AS what
           FROM generate_series(0, length(t.b) / 4 - 1) i
           WHERE CASE WHEN length(r.b) <> length(t.b) THEN i = 0 ELSE word(r.b, 4 * i) <> word(t.b, 4 * i) END) d
GROUP BY c.ord, c.kase ORDER BY c.ord;

-- The forged documents, and the entry the accessors look up in each: the
-- one damaged, as an array index or an object key.
CREATE VIEW forged AS
SELECT t.doc, c.ord, c.kase, t.partno, r.b,
  jt_test_skeleton_replace_part(d.jb, t.partno::int, r.b) AS jb, o.jb AS genuine,
  CASE WHEN t.doc LIKE 'root%' THEN '' ELSE '-> ''w'' ' END AS w,
  CASE WHEN t.doc LIKE 'root%' THEN '{' ELSE '{w,' END AS path,
  CASE WHEN t.v = 0 THEN (t.first_elem + e.i)::text
    ELSE (SELECT k FROM jsonb_object_keys(CASE WHEN t.doc LIKE 'root%' THEN o.jb ELSE o.jb -> 'w' END)
            WITH ORDINALITY x(k, n)
          WHERE n = t.first_elem + e.i + 1)
  END AS elem
FROM target t
  JOIN w d ON d.name = t.doc
  JOIN orig o ON o.doc = t.doc
  CROSS JOIN cases c
  JOIN w r ON r.name = t.doc || ': ' || c.kase,
  LATERAL (SELECT CASE c.at WHEN 'plain' THEN t.plain WHEN 'stride' THEN t.stride ELSE t.last END - t.v AS i) e;

-- The forgery itself: the intact bytes, read where the directory now
-- points (the bytea's TOAST value), give back the document byte for byte;
-- and the entries looked up exist.
SELECT f.doc, p.value_id = pg_column_toast_chunk_id(f.b) AS part_replaced,
  p.value_id <> (SELECT value_id FROM jsonb_toaster_parts(d.jb) WITH ORDINALITY q WHERE q.ordinality = f.partno + 1) AS moved,
  jt_test_flat_bytes(f.jb) = jt_test_flat_bytes(f.genuine) AS same_bytes,
  (SELECT count(*) FROM forged e WHERE e.doc = f.doc AND e.genuine #> (e.path || e.elem || '}')::text[] IS NULL) AS missing
FROM forged f JOIN w d ON d.name = f.doc,
  LATERAL (SELECT value_id FROM jsonb_toaster_parts(f.jb) WITH ORDINALITY q WHERE q.ordinality = f.partno + 1) p
WHERE f.kase = 'intact' ORDER BY 1;

-- Each way of reading each forged document: "ok: true" if it gives what
-- the original document gives.  The whole value is flattened by ::text
-- and =; -> 'k' reads only the skeleton's tree; -> 'w' flattens the wide
-- container alone, gluing its parts (for "root", the container is the
-- document); -> 'w' -> elem looks the damaged entry up in that; #> finds
-- the damaged part through the directory and reads the entry there; and
-- jsonb_set(), #-, - and || change the damaged entry (in "root object", by
-- changing the damaged part alone).
CREATE TABLE ops (op int, label text, expr text);
INSERT INTO ops VALUES
  (1, 'jb::text', 'md5(%1$s::text)'),
  (2, 'jb = original', '%1$s = genuine'),
  (3, 'jb -> ''k''', '%1$s -> ''k'''),
  (4, 'jb -> ''w''', '%1$s %2$s'),
  (5, 'jb -> ''w'' -> elem', '%1$s %2$s-> %3$s'),
  (6, 'jb #> ''{w,elem}''', '%1$s #> %4$L'),
  (7, 'jsonb_set(jb, ''{w,elem}'', ''0'')', 'jsonb_set(%1$s, %4$L, ''0'')'),
  (8, 'jb #- ''{w,elem}''', '%1$s #- %4$L'),
  (9, 'jb - elem', '%1$s - (%3$s)::text'),
  (10, 'jb || {elem: 0}', '%1$s || jsonb_build_object(%3$s, 0)');
CREATE TABLE results AS
SELECT f.doc, f.ord, f.kase, ops.op, ops.label,
  try(format('SELECT (%s) IS NOT DISTINCT FROM (%s) FROM forged WHERE doc = %L AND kase = %L',
             format(ops.expr, 'jb', f.w, e.lit, f.path || f.elem || '}'),
             format(ops.expr, 'genuine', f.w, e.lit, f.path || f.elem || '}'),
             f.doc, f.kase)) AS result
FROM (SELECT doc, ord, kase, w, path, elem FROM forged) f,
  LATERAL (SELECT CASE WHEN f.doc IN ('object', 'root object') THEN quote_literal(f.elem) ELSE f.elem END AS lit) e,
  ops;

SELECT ord, kase, label, result,
  CASE WHEN count(*) = (SELECT count(*) FROM results r2 WHERE r2.kase = r.kase AND r2.op = r.op) THEN 'all'
    ELSE string_agg(doc, ', ' ORDER BY doc) END AS docs
FROM results r GROUP BY ord, kase, op, label, result ORDER BY ord, op, docs;

-- In short: no wrong answer, and every damaged part that is read raises
-- an ERROR for data corruption.
SELECT count(*) FILTER (WHERE result = 'ok: true') AS right_answers,
  count(*) FILTER (WHERE result LIKE 'XX001: %') AS corruption_errors,
  count(*) FILTER (WHERE result NOT LIKE 'XX001: %' AND result <> 'ok: true') AS anything_else
FROM results;

--
-- The chunks of a reference's parts, read together in one index scan
-- (part_fetch.c), checked against the directory as core checks a value's
-- against its TOAST pointer.  Part 1 of the wide array of each document
-- (read along with the others) claims other sizes or another value: hex
-- digests, which pglz leaves uncompressed (parts of several chunks), and
-- numerics (parts compressed into one chunk), each part compressed on its
-- own (units.sql damages compression units).
--
SET jsonb_toaster.range_size = 8192;
SET jsonb_toaster.unit_size = 0;
CREATE TABLE pc (doc text, jb jsonb);
ALTER TABLE pc ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO pc VALUES
  ('digests', jsonb_build_object('k', 1, 'w',
    (SELECT jsonb_agg(sha256(int4send(j))::text) FROM generate_series(1, 1000) j))),
  ('numerics', jsonb_build_object('k', 1, 'w',
    (SELECT jsonb_agg(j * 1.5) FROM generate_series(1, 10000) j)));
RESET jsonb_toaster.range_size;
RESET jsonb_toaster.unit_size;
CREATE TABLE pc_parts AS
SELECT doc, p.range, p.raw_size, p.stored_size, p.value_id, p.value_offset, p.chunks,
  p.compression
FROM pc, jsonb_toaster_parts(jb) p WHERE p.path = '{w}';
SELECT doc, count(*) > 2 AS several_parts, min(chunks) AS min_chunks, max(chunks) AS max_chunks,
  bool_and(compression IS NOT NULL) AS compressed
FROM pc_parts GROUP BY doc ORDER BY doc;
CREATE TABLE pc_cases (ord int, kase text, rawsize text, extsize text, valueid text,
  valueoffset text DEFAULT 'value_offset');
INSERT INTO pc_cases VALUES
  (3, 'part 2''s bytes', 'raw_size', 'stored_size',
   '(SELECT value_id FROM pc_parts q WHERE q.doc = p.doc AND q.range = 2)',
   '(SELECT value_offset FROM pc_parts q WHERE q.doc = p.doc AND q.range = 2)'),
  (10, 'past its value''s end', 'raw_size', 'stored_size', 'value_id',
   'value_offset + 100000000');
INSERT INTO pc_cases (ord, kase, rawsize, extsize, valueid) VALUES
  (1, 'genuine', 'raw_size', 'stored_size', 'value_id'),
  (2, 'no such value', 'raw_size', 'stored_size', '1'),
  (4, 'a chunk more', 'raw_size + 1996', 'stored_size + 1996', 'value_id'),
  (5, 'the last chunk less', 'raw_size - ((stored_size - 1) % 1996 + 1)',
   'stored_size - ((stored_size - 1) % 1996 + 1)', 'value_id'),
  (6, 'last chunk longer', 'raw_size + 1', 'stored_size + 1', 'value_id'),
  (7, 'last chunk shorter', 'raw_size - 1', 'stored_size - 1', 'value_id'),
  (8, 'stored larger than raw', 'raw_size', 'raw_size', 'value_id'),
  (9, 'raw size one more', 'raw_size + 1', 'stored_size', 'value_id');
CREATE FUNCTION pc_forged(d text, k text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  c pc_cases;
  result jsonb;
BEGIN
  SELECT * INTO c FROM pc_cases WHERE kase = k;
  -- w is the document's only reference: its range 1 is part 1
  EXECUTE format('SELECT jt_test_skeleton_set_part(jb, 1, %s, %s, %s, %s) '
                 'FROM pc JOIN pc_parts p USING (doc) WHERE p.doc = %L AND p.range = 1',
                 c.rawsize, c.extsize, c.valueid, c.valueoffset, d) INTO result;
  RETURN result;
END $$;
SELECT c.ord, c.kase, d.doc,
  try(format('SELECT jt_test_flat_bytes(pc_forged(%L, %L)) = jt_test_flat_bytes(jb) FROM pc WHERE doc = %L',
             d.doc, c.kase, d.doc)) AS whole,
  try(format('SELECT pc_forged(%L, %L) -> ''w'' = jb -> ''w'' FROM pc WHERE doc = %L',
             d.doc, c.kase, d.doc)) AS wide_array
FROM pc_cases c, (SELECT DISTINCT doc FROM pc) d ORDER BY c.ord, d.doc;
DROP FUNCTION pc_forged(text, text);
DROP TABLE pc, pc_parts, pc_cases;

--
-- Compressed parts are decompressed where they are used: a reference's
-- only part straight into the result, the parts of a wide array one after
-- another into a buffer they share (skeleton.c).  The bytes of part 1 (of
-- part 0 when it is the only one), intact or damaged, are stored
-- compressed in another column of the table and the directory entry
-- pointed at them: the intact ones give back the document, the damaged
-- ones raise an ERROR when the document or the wide array is flattened
-- (->> flattens a one-part array too, where -> would hand PostgreSQL a
-- pointer to the part).
--
SET jsonb_toaster.range_size = 65536;
CREATE TABLE pz (doc text, jb jsonb, bz bytea);
ALTER TABLE pz ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO pz (doc, jb) VALUES
  ('one part', jsonb_build_object('k', 1, 'w', (SELECT jsonb_agg(j * 1.5) FROM generate_series(1, 3000) j))),
  ('parts', jsonb_build_object('k', 1, 'w', (SELECT jsonb_agg(j * 1.5) FROM generate_series(1, 20000) j)));
RESET jsonb_toaster.range_size;
CREATE TABLE pz_target AS
SELECT doc, CASE WHEN n = 1 THEN 0 ELSE 1 END AS partno, n AS parts,
  jt_test_part_bytes(jb, CASE WHEN n = 1 THEN 0 ELSE 1 END) AS b
FROM pz, LATERAL (SELECT count(*) AS n FROM jsonb_toaster_parts(jb)) p;
INSERT INTO pz (doc, bz)
SELECT t.doc || ': ' || c.kase,
  CASE c.kase
    WHEN 'intact' THEN t.b
    WHEN 'count one more' THEN set_word(t.b, 0, word(t.b, 0) + 1)
    WHEN 'truncated by one byte' THEN substr(t.b, 1, octet_length(t.b) - 1)
  END
FROM pz_target t,
  (VALUES ('intact'), ('count one more'), ('truncated by one byte')) c(kase);
SELECT t.doc, t.parts,
  count(*) FILTER (WHERE pg_column_compression(z.bz) = 'pglz'
                   AND pg_column_toast_chunk_id(z.bz) IS NOT NULL) AS stored_compressed
FROM pz_target t JOIN pz z ON z.doc LIKE t.doc || ': %' GROUP BY t.doc, t.parts ORDER BY 1;
CREATE FUNCTION pz_forged(d text, r text) RETURNS jsonb LANGUAGE sql AS $$
  SELECT jt_test_skeleton_replace_part(p.jb, t.partno, z.bz)
  FROM pz p JOIN pz_target t USING (doc), pz z WHERE p.doc = d AND z.doc = r
$$;
SELECT z.doc,
  try(format('SELECT jt_test_flat_bytes(pz_forged(%L, %L)) = jt_test_flat_bytes(jb) FROM pz WHERE doc = %1$L',
             t.doc, z.doc)) AS whole,
  try(format('SELECT pz_forged(%L, %L) ->> ''w'' = jb ->> ''w'' FROM pz WHERE doc = %1$L',
             t.doc, z.doc)) AS wide_array
FROM pz_target t JOIN pz z ON z.doc LIKE t.doc || ': %' ORDER BY 1;
DROP FUNCTION pz_forged(text, text);
DROP TABLE pz, pz_target;

-- A part whose lz4 stream has a match at distance 0, which no compressor
-- writes and liblz4 would follow (copying bytes not yet written): the
-- decoder refuses it.  The stream (4 literals; a match of 219 bytes at
-- distance 0; 20 last literals: 243 raw bytes in 30) with its header (raw
-- size, method lz4) is stored at the start of a bytea as long as the
-- part's TOAST value, kept uncompressed in the same TOAST relation, and the
-- part's directory entry pointed at it.
SET jsonb_toaster.range_size = 65536;
CREATE TABLE pl (jb jsonb COMPRESSION lz4, b bytea STORAGE EXTERNAL);
ALTER TABLE pl ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO pl (jb) SELECT jsonb_build_object('k', 1, 'w',
  (SELECT jsonb_agg('item ' || j) FROM generate_series(1, 3000) j));
RESET jsonb_toaster.range_size;
SELECT count(*) AS parts, min(p.compression) AS compression,
  (SELECT count(*) FROM jsonb_toaster_values(jb)) AS "values"
FROM pl, jsonb_toaster_parts(jb) p GROUP BY jb;
UPDATE pl SET b = '\xf3000040'::bytea || '\x4f61626364'::bytea || '\x0000c8'::bytea
  || '\xf005'::bytea || decode(repeat('65', 20), 'hex')
  || decode(repeat('00', (SELECT v.size FROM jsonb_toaster_values(jb) v) - 34), 'hex');
SELECT octet_length(b) = (SELECT v.size FROM jsonb_toaster_values(jb) v) AS same_size,
  pg_column_toast_chunk_id(b) IS NOT NULL AS stored_apart
FROM pl;
SELECT try('SELECT jt_test_flat_bytes(jt_test_skeleton_set_part(jb, 0, 247, 34,
                   pg_column_toast_chunk_id(b), 0)) = jt_test_flat_bytes(jb) FROM pl') AS whole;
DROP TABLE pl;

-- A pointer that claims another document size than its parts make: the
-- flattened document is checked against the claim.  The flattener
-- allocates the claimed size up front, but at most 64 MB of it, so a claim
-- of almost 1 GB fails as the others do.
CREATE TABLE rs (jb jsonb);
ALTER TABLE rs ALTER COLUMN jb SET (toaster = 'jsonb_toaster');
INSERT INTO rs SELECT jsonb_build_object('k', 1,
  'w', (SELECT jsonb_agg(repeat('x', 40) || g) FROM generate_series(1, 3000) g));
SELECT (jsonb_toaster_storage(jb)).form FROM rs;
SELECT c.kase,
  try(format('SELECT jt_test_flat_bytes(jt_test_skeleton_set_rawsize(jb, %s)) = jt_test_flat_bytes(jb) FROM rs',
             c.claim)) AS whole
FROM (SELECT 'as stored' AS kase, (jsonb_toaster_storage(jb)).raw_size AS claim FROM rs
      UNION ALL SELECT 'one byte less', (jsonb_toaster_storage(jb)).raw_size - 1 FROM rs
      UNION ALL SELECT 'one byte more', (jsonb_toaster_storage(jb)).raw_size + 1 FROM rs
      UNION ALL SELECT 'almost 1 GB', 1000000000
      UNION ALL SELECT 'none', 0) c;
DROP TABLE rs;

DROP VIEW forged;
DROP FUNCTION damage(target, text);
DROP TABLE w, orig, target, cases, ops, results;
DROP FUNCTION try(text), word(bytea, int), set_word(bytea, int, bigint), jentry(bytea, int),
  entry_end(bytea, int);
DROP EXTENSION jsonb_toaster_test;
