/*-------------------------------------------------------------------------
 *
 * public_id.c
 *	  snowid_to_public() and snowid_from_public(): keyed public ids.
 *
 * A public id is the key version (one base32 symbol) followed by the 13
 * base32 symbols of the id put through a keyed permutation of the 63-bit
 * values (feistel.c, with HMAC-SHA-256 rounds from feistel_hmac.c).  It
 * hides an id's creation time and worker, and neighbouring ids give
 * unrelated public ids.  It authorises nothing: anyone who can call these
 * functions can map ids both ways, and a guessed public id decodes to
 * some id.
 *
 * Keys.  snowid.public_id_keys_file names a file of version:key lines
 * (format in keyring.h) that only the server's OS user may read, as
 * PostgreSQL requires of ssl_key_file.  Each backend keeps the parsed
 * keys in process memory and checks the file with stat() at every call:
 * when its identity, size, modification or change time differ, or a
 * configuration reload set the setting again, the file is read again.  A
 * file that cannot be used (missing, readable by others, malformed) makes
 * every call fail until it is fixed; the keys read before are dropped,
 * never used further.
 *
 * The newest key (last line) encodes; any listed key decodes.  Both
 * functions are STABLE, not IMMUTABLE: the result depends on the key file.
 *
 * Errors never show key material: a malformed file is reported by line
 * number and reason.
 *
 *-------------------------------------------------------------------------
 */
#include "snowid.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/hmac.h"
#include "storage/fd.h"
#include "utils/builtins.h"

#include "base32.h"
#include "feistel.h"
#include "keyring.h"
#include "shmem.h"

PG_FUNCTION_INFO_V1(snowid_to_public);
PG_FUNCTION_INFO_V1(snowid_from_public);

/* A key file larger than this is surely not one. */
#define MAX_KEY_FILE_SIZE	(64 * 1024)

/* The keys this backend read, and what the file looked like then. */
static SnowidKeyRing keyring;
static bool keyring_valid = false;
static char keyring_path[MAXPGPATH];
static struct stat keyring_stat;
static uint32 keyring_assignments;

/* Do two stat results describe the same, unchanged file? */
static bool
same_file_state(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev &&
		a->st_ino == b->st_ino &&
		a->st_size == b->st_size &&
		a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
		a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
		a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
		a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static void
forget_keys(void)
{
	keyring_valid = false;
	snowid_keyring_clear(&keyring);
}

/*
 * Read and check the key file into the static keyring, or raise an error
 * (after forgetting any keys read before).
 */
static void
load_keys(const char *path)
{
	int			fd;
	struct stat st;
	char	   *buf;
	ssize_t		nread;
	SnowidKeyRingError err;
	int			line = 0;

	forget_keys();

	fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open snowid public id key file \"%s\": %m",
						path),
				 errhint("Check snowid.public_id_keys_file in postgresql.conf.")));
	if (fstat(fd, &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat snowid public id key file \"%s\": %m",
						path)));
	if (!S_ISREG(st.st_mode))
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("snowid public id key file \"%s\" is not a regular file",
						path)));
	if (st.st_uid != geteuid())
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("snowid public id key file \"%s\" must be owned by the database server's OS user",
						path)));
	if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("snowid public id key file \"%s\" has group or world access",
						path),
				 errdetail("The file must be readable by the database server's OS user only (permissions u=rw (0600) or less)."),
				 errhint("Run chmod 600 on the file.")));
	if (st.st_size > MAX_KEY_FILE_SIZE)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("snowid public id key file \"%s\" is too large", path),
				 errdetail("A key file has at most %d bytes.", MAX_KEY_FILE_SIZE)));

	buf = palloc(MAX_KEY_FILE_SIZE + 1);
	nread = read(fd, buf, MAX_KEY_FILE_SIZE + 1);
	if (nread < 0)
	{
		int			save_errno = errno;

		pfree(buf);
		errno = save_errno;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read snowid public id key file \"%s\": %m",
						path)));
	}
	CloseTransientFile(fd);

	if (nread > MAX_KEY_FILE_SIZE)
		err = SNOWID_KEYRING_LONG;	/* grew since fstat: reported below */
	else
		err = snowid_keyring_parse(buf, (size_t) nread, &keyring, &line);
	explicit_bzero(buf, MAX_KEY_FILE_SIZE + 1);
	pfree(buf);

	if (nread > MAX_KEY_FILE_SIZE)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("snowid public id key file \"%s\" is too large", path),
				 errdetail("A key file has at most %d bytes.", MAX_KEY_FILE_SIZE)));
	if (err == SNOWID_KEYRING_EMPTY)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("snowid public id key file \"%s\" lists no key", path),
				 errhint("Add a line version:key, e.g. 1: followed by 64 hexadecimal digits from a random source.")));
	if (err != SNOWID_KEYRING_OK)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("invalid snowid public id key file \"%s\" at line %d",
						path, line),
				 errdetail("%s", snowid_keyring_error_text(err))));

	strlcpy(keyring_path, path, sizeof(keyring_path));
	keyring_stat = st;
	keyring_assignments = snowid_public_id_keys_assignments;
	keyring_valid = true;
}

/*
 * The keys, read again if the setting or the file changed.  Errors if the
 * library is not preloaded (the setting exists only then), if no file is
 * set, or if the file cannot be used.
 */
static const SnowidKeyRing *
get_keys(void)
{
	const char *path = snowid_public_id_keys_file;
	struct stat st;

	/* Not preloaded: the setting is not defined, so never trust its placeholder. */
	if (snowid_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowid must be loaded via \"shared_preload_libraries\""),
				 errdetail("The setting snowid.public_id_keys_file exists only when snowid is preloaded."),
				 errhint("Add the line shared_preload_libraries = 'snowid' to postgresql.conf (or add snowid to the list already there) and restart the server.")));
	if (path == NULL || path[0] == '\0')
	{
		forget_keys();
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowid has no keys for public ids"),
				 errdetail("snowid.public_id_keys_file is not set."),
				 errhint("Write version:key lines to a file only the server's OS user can read, set snowid.public_id_keys_file to it in postgresql.conf, and reload the configuration.")));
	}

	if (keyring_valid &&
		keyring_assignments == snowid_public_id_keys_assignments &&
		strcmp(keyring_path, path) == 0 &&
		stat(path, &st) == 0 &&
		same_file_state(&st, &keyring_stat))
		return &keyring;

	load_keys(path);
	return &keyring;
}

/*
 * Run the permutation (or its inverse) of value with one key.  The HMAC
 * context is freed before any error is raised.
 */
static int64
permute(const SnowidKey *key, int64 value, bool decrypt)
{
	SnowidHmacRound round;
	int64		result = 0;
	bool		ok;
	const char *why = NULL;

	round.ctx = pg_hmac_create(PG_SHA256);
	if (round.ctx == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OUT_OF_MEMORY),
				 errmsg("out of memory")));
	round.key = key->bytes;
	round.key_len = key->len;
	if (decrypt)
		ok = snowid_feistel_decrypt(value, snowid_hmac_round, &round, &result);
	else
		ok = snowid_feistel_encrypt(value, snowid_hmac_round, &round, &result);
	if (!ok)
		why = pstrdup(pg_hmac_error(round.ctx));
	pg_hmac_free(round.ctx);
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("could not compute HMAC for a snowid public id: %s", why)));
	return result;
}

/* A snowid as its public id: key version and permuted value in base32. */
Datum
snowid_to_public(PG_FUNCTION_ARGS)
{
	int64		value = PG_GETARG_SNOWID(0);
	const SnowidKeyRing *ring = get_keys();
	char		buf[SNOWID_PUBLIC_LEN + 1];

	snowid_public_encode(ring->newest,
						 permute(&ring->keys[ring->newest], value, false),
						 buf);
	PG_RETURN_TEXT_P(cstring_to_text(buf));
}

/*
 * A public id back to its snowid.  A malformed id, or one whose key version
 * is not in the key file, is a soft error (see snowid_from_base32); a
 * missing key file is not: that is the server's state, not the input's.
 */
Datum
snowid_from_public(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);
	const SnowidKeyRing *ring = get_keys();
	int			version = 0;
	int64		value = 0;

	switch (snowid_public_decode(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t),
								 &version, &value))
	{
		case SNOWID_BASE32_OK:
			break;
		case SNOWID_BASE32_SYNTAX:
			ereturn(fcinfo->context, (Datum) 0,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("invalid public snowid: \"%s\"", text_to_cstring(t)),
					 errdetail("A public snowid uses the characters 0-9 and A-Z without U (I and L read as 1, O as 0); hyphens are ignored.")));
		case SNOWID_BASE32_LENGTH:
			ereturn(fcinfo->context, (Datum) 0,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("invalid public snowid: \"%s\"", text_to_cstring(t)),
					 errdetail("A public snowid has exactly %d characters, not counting hyphens.",
							   SNOWID_PUBLIC_LEN)));
		case SNOWID_BASE32_RANGE:
			ereturn(fcinfo->context, (Datum) 0,
					(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
					 errmsg("invalid public snowid: \"%s\"", text_to_cstring(t)),
					 errdetail("The second character of a public snowid is a digit from 0 to 7.")));
	}
	if (!ring->keys[version].present)
		ereturn(fcinfo->context, (Datum) 0,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid public snowid: \"%s\"", text_to_cstring(t)),
				 errdetail("Its key version %c is not in the key file.",
						   snowid_base32_symbol(version))));

	PG_RETURN_SNOWID(permute(&ring->keys[version], value, true));
}
