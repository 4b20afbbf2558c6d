/*-------------------------------------------------------------------------
 *
 * uninstall.c
 *	  Leaving the toaster: converting a column back to standard storage, and
 *	  refusing DROP EXTENSION while columns still use the toaster.
 *
 * Values the toaster stored can be read only by this library.  A column
 * leaves the toaster with jsonb_toaster_convert_column(), which resets the
 * column's option and rewrites every value still stored as a skeleton into
 * standard TOAST.  DROP EXTENSION is refused while any column of the
 * database names the toaster, so that the usual way out (drop the
 * extension, then take the library out of shared_preload_libraries) cannot
 * leave values nobody can read.
 *
 * Copyright (c) 2026, jsonb_toaster developers
 *
 * src/uninstall.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"

#include "uninstall.h"

#ifdef JT_CUSTOM_TOAST

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/reloptions.h"
#include "access/table.h"
#include "catalog/catalog.h"
#include "catalog/namespace.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "toaster.h"

/* Columns named in the DROP EXTENSION error; the count covers the rest */
#define JT_MAX_COLUMNS_LISTED	10

static object_access_hook_type prev_object_access_hook = NULL;

/*
 * Does this attoptions array set toaster = jsonb_toaster?
 */
static bool
options_name_our_toaster(Datum attoptions)
{
	List	   *options = untransformRelOptions(attoptions);

	foreach_node(DefElem, opt, options)
	{
		if (strcmp(opt->defname, "toaster") == 0 &&
			strcmp(defGetString(opt), JSONB_TOASTER_NAME) == 0)
			return true;
	}
	return false;
}

/*
 * Raise an ERROR naming the columns of the current database whose option
 * names the toaster, if there are any.
 */
static int
compare_names(const ListCell *a, const ListCell *b)
{
	return strcmp(lfirst(a), lfirst(b));
}

static void
refuse_while_columns_use_toaster(void)
{
	Relation	attrel;
	SysScanDesc scan;
	HeapTuple	tuple;
	List	   *columns = NIL;
	StringInfoData listed;
	int			n;

	attrel = table_open(AttributeRelationId, AccessShareLock);
	scan = systable_beginscan(attrel, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_attribute att = (Form_pg_attribute) GETSTRUCT(tuple);
		Datum		attoptions;
		bool		isnull;
		Oid			nspid;

		if (att->attnum <= 0 || att->attisdropped ||
			IsCatalogRelationOid(att->attrelid))
			continue;
		attoptions = heap_getattr(tuple, Anum_pg_attribute_attoptions,
								  RelationGetDescr(attrel), &isnull);
		if (isnull || !options_name_our_toaster(attoptions))
			continue;
		nspid = get_rel_namespace(att->attrelid);
		columns = lappend(columns,
						  psprintf("%s.%s",
								   quote_qualified_identifier(get_namespace_name(nspid),
															  get_rel_name(att->attrelid)),
								   quote_identifier(NameStr(att->attname))));
	}
	systable_endscan(scan);
	table_close(attrel, AccessShareLock);

	if (columns == NIL)
		return;

	/* name the first few in a stable order */
	list_sort(columns, compare_names);
	initStringInfo(&listed);
	n = 0;
	foreach_ptr(char, name, columns)
	{
		if (n == JT_MAX_COLUMNS_LISTED)
		{
			appendStringInfo(&listed, " and %d more",
							 list_length(columns) - JT_MAX_COLUMNS_LISTED);
			break;
		}
		appendStringInfo(&listed, "%s%s", n++ > 0 ? ", " : "", name);
	}
	ereport(ERROR,
			(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
			 errmsg("cannot drop extension jsonb_toaster because columns use its toaster"),
			 list_length(columns) == 1 ?
			 errdetail("Column %s stores its values with jsonb_toaster.",
					   listed.data) :
			 errdetail("%d columns store their values with jsonb_toaster: %s.",
					   list_length(columns), listed.data),
			 errhint("Convert each column back to standard storage with jsonb_toaster_convert_column(), then drop the extension.")));
}

static void
jt_object_access(ObjectAccessType access, Oid classId, Oid objectId,
				 int subId, void *arg)
{
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);

	if (access == OAT_DROP && classId == ExtensionRelationId &&
		objectId == get_extension_oid(JSONB_TOASTER_NAME, true))
		refuse_while_columns_use_toaster();
}

void
jt_uninstall_init(void)
{
	prev_object_access_hook = object_access_hook;
	object_access_hook = jt_object_access;
}

/*
 * Run one SQL command through SPI; returns the number of rows processed.
 */
static uint64
run_command(const char *sql, int expected)
{
	int			rc = SPI_execute(sql, false, 0);

	if (rc != expected)
		elog(ERROR, "jsonb_toaster: \"%s\" failed: %s", sql,
			 SPI_result_code_string(rc));
	return SPI_processed;
}

#endif							/* JT_CUSTOM_TOAST */

/*
 * jsonb_toaster_convert_column(rel regclass, col name) returns bigint
 *
 * Take a column out of the toaster: reset its "toaster" option and store
 * every value still kept as a skeleton again with standard TOAST.  Returns
 * the number of rows rewritten.  The rows are rewritten by an UPDATE in the
 * caller's transaction, so row triggers fire and the old versions are left
 * for VACUUM.  The table is locked against writes meanwhile: a concurrent
 * writer could otherwise store new skeletons under the old option.
 */
PG_FUNCTION_INFO_V1(jsonb_toaster_convert_column);
Datum
jsonb_toaster_convert_column(PG_FUNCTION_ARGS)
{
#ifdef JT_CUSTOM_TOAST
	Oid			relid = PG_GETARG_OID(0);
	Name		colname = PG_GETARG_NAME(1);
	char		relkind;
	AttrNumber	attnum;
	char	   *qualified;
	const char *column;
	const char *schema;
	const char *is_skeleton;
	uint64		converted;
	uint64		left;

	relkind = get_rel_relkind(relid);
	if (relkind == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", get_rel_name(relid)),
				 errdetail("jsonb_toaster_convert_column() rewrites the rows of a table.")));
	if (!object_ownercheck(RelationRelationId, relid, GetUserId()))
		aclcheck_error(ACLCHECK_NOT_OWNER, get_relkind_objtype(relkind),
					   get_rel_name(relid));
	attnum = get_attnum(relid, NameStr(*colname));
	if (attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of relation \"%s\" does not exist",
						NameStr(*colname), get_rel_name(relid))));
	if (get_atttype(relid, attnum) != JSONBOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" of relation \"%s\" is not of type jsonb",
						NameStr(*colname), get_rel_name(relid))));

	qualified = quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
										   get_rel_name(relid));
	column = quote_identifier(NameStr(*colname));
	schema = quote_identifier(get_namespace_name(get_extension_schema(get_extension_oid(JSONB_TOASTER_NAME, false))));
	is_skeleton = psprintf("(%s.jsonb_toaster_storage(%s)).form = 'skeleton'",
						   schema, column);

	SPI_connect();
	run_command(psprintf("LOCK TABLE %s IN EXCLUSIVE MODE", qualified),
				SPI_OK_UTILITY);
	run_command(psprintf("ALTER TABLE %s ALTER COLUMN %s RESET (toaster)",
						 qualified, column),
				SPI_OK_UTILITY);
	converted = run_command(psprintf("UPDATE %s SET %s = %s.jsonb_toaster_standard(%s) WHERE %s",
									 qualified, column, schema, column, is_skeleton),
							SPI_OK_UPDATE);

	/*
	 * Under REPEATABLE READ the UPDATE's snapshot may predate the lock, and
	 * rows committed meanwhile would keep their skeletons: check.
	 */
	run_command(psprintf("SELECT 1 FROM %s WHERE %s LIMIT 1", qualified, is_skeleton),
				SPI_OK_SELECT);
	left = SPI_processed;
	SPI_finish();
	if (left > 0)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not convert every value of column \"%s\" of \"%s\"",
						NameStr(*colname), get_rel_name(relid)),
				 errdetail("Rows written by transactions that committed after this one started still hold skeletons."),
				 errhint("Run jsonb_toaster_convert_column() in a READ COMMITTED transaction.")));

	PG_RETURN_INT64((int64) converted);
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("jsonb_toaster_convert_column() needs a server with the custom TOAST hooks"),
			 errdetail("This server cannot store values with the toaster, so there is nothing to convert.")));
	PG_RETURN_NULL();
#endif
}

/*
 * jsonb_toaster_standard(jsonb) returns jsonb
 *
 * The value as an ordinary jsonb in memory, however it is stored: storing
 * the result in a column that does not use the toaster gives it standard
 * storage.
 */
PG_FUNCTION_INFO_V1(jsonb_toaster_standard);
Datum
jsonb_toaster_standard(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(PG_DETOAST_DATUM_COPY(PG_GETARG_DATUM(0)));
}
