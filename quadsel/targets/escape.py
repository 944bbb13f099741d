"""Text from input files made safe for generated code: C comments and C identifiers."""

import re

from ..errors import printable

C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
C_KEYWORDS = frozenset("auto break case char const continue default do double else enum extern float for goto if "
                       "inline int long register restrict return short signed sizeof static struct switch typedef "
                       "union unsigned void volatile while _Bool _Complex _Imaginary "
                       # C11 and C23 keywords: the C must still compile when a later standard is chosen
                       "_Alignas _Alignof _Atomic _Generic _Noreturn _Static_assert _Thread_local alignas alignof "
                       "bool constexpr false nullptr static_assert thread_local true typeof typeof_unqual".split())
# C99 §7.1.3: every external name of the standard library is reserved, and so are the macros and types of the
# headers the generated files include (<limits.h>, <stddef.h>, <stdint.h>); `__func__` is predefined (§6.4.2.2).
C_LIBRARY_NAMES = frozenset((
    "main __func__ NULL offsetof size_t ptrdiff_t wchar_t max_align_t errno assert "
    "abort abs atexit atof atoi atol atoll bsearch calloc div exit free getenv labs llabs ldiv lldiv malloc mblen "
    "mbstowcs mbtowc qsort rand realloc srand strtod strtof strtol strtold strtoll strtoul strtoull system "
    "wcstombs wctomb clearerr fclose feof ferror fflush fgetc fgetpos fgets fopen fprintf fputc fputs fread freopen "
    "fscanf fseek fsetpos ftell fwrite getc getchar gets perror printf putc putchar puts remove rename rewind scanf "
    "setbuf setvbuf snprintf sprintf sscanf tmpfile tmpnam ungetc vfprintf vfscanf vprintf vscanf vsnprintf "
    "vsprintf vsscanf FILE EOF BUFSIZ stdin stdout stderr memchr memcmp memcpy memmove memset strcat strchr strcmp "
    "strcoll strcpy strcspn strerror strlen strncat strncmp strncpy strpbrk strrchr strspn strstr strtok strxfrm "
    "acos asin atan atan2 cbrt ceil cos cosh exp exp2 expm1 fabs floor fma fmax fmin fmod frexp hypot ldexp lgamma "
    "log log10 log1p log2 lrint lround modf nan nearbyint pow remainder rint round scalbn sin sinh sqrt tan tanh "
    "tgamma trunc clock time difftime mktime asctime ctime gmtime localtime strftime setjmp longjmp signal raise "
    "setlocale localeconv va_start va_arg va_end va_copy va_list jmp_buf sig_atomic_t clock_t time_t fpos_t "
    "div_t ldiv_t lldiv_t intmax_t uintmax_t intptr_t uintptr_t").split())
# Patterns the standard reserves (§7.26 future library directions, §7.18 <stdint.h> limits and macros).
_RESERVED = re.compile(r"^(?:_[A-Z_]|__|(?:is|to|str|mem|wcs)[a-z]|E[0-9A-Z]|SIG_?[A-Z]|LC_[A-Z]|(?:PRI|SCN)[a-zX]"
                       r"|u?int[a-z0-9_]*_t$|[A-Z][A-Z0-9_]*_(?:MIN|MAX|BIT|C)$|QUADSEL_|quadsel_blob_)")


def reserved_c_name(name):
    """Why `name` cannot name a generated C function (a keyword, a standard-library or reserved name, a name of
    the generated file's own macros), or None when it can."""
    if not C_IDENTIFIER.match(name):
        return "is not a valid C identifier"
    if name in C_KEYWORDS:
        return "is a C keyword"
    if name in C_LIBRARY_NAMES:
        return "is a name of the C standard library"
    if _RESERVED.match(name):
        return "is reserved (C99 7.1.3: standard-library prefixes, leading underscores; QUADSEL_: the file's own macros)"
    return None


def comment_text(text):
    """Text safe inside a C block comment: printable ASCII only, no comment terminator."""
    return printable(text).replace("*/", "* /").replace("/*", "/ *")


def identifier_part(text):
    """An upper-case C identifier fragment from an arbitrary algorithm name."""
    part = re.sub(r"[^A-Za-z0-9]+", "_", str(text)).strip("_").upper()
    return part or "ALG"
