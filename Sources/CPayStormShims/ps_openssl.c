#include "ps_openssl.h"

void ps_openssl_free(void *pointer) { OPENSSL_free(pointer); }

STACK_OF(X509) *ps_sk_X509_new_null(void) { return sk_X509_new_null(); }
int ps_sk_X509_push(STACK_OF(X509) *stack, X509 *certificate) { return sk_X509_push(stack, certificate); }
int ps_sk_X509_num(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
X509 *ps_sk_X509_value(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }
void ps_sk_X509_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }

STACK_OF(X509) *ps_PKCS7_certificates(PKCS7 *p7) { return PKCS7_type_is_signed(p7) ? p7->d.sign->cert : NULL; }

long ps_BIO_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }
