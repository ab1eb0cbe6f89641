#include "ps_microhttpd.h"

struct MHD_Daemon *ps_mhd_start_daemon(unsigned int flags,
                                       const struct sockaddr *bind_address,
                                       unsigned int thread_pool_size,
                                       unsigned int connection_limit,
                                       unsigned int connection_timeout,
                                       size_t connection_memory_limit,
                                       MHD_AccessHandlerCallback handler,
                                       void *handler_cls,
                                       void *(*uri_log)(void *cls, const char *uri, struct MHD_Connection *connection),
                                       void *uri_log_cls,
                                       MHD_RequestCompletedCallback completed,
                                       void *completed_cls,
                                       const char *https_key_pem,
                                       const char *https_cert_pem) {
    /* The TLS options ride in an option array, empty (just the end marker) for plain HTTP. */
    struct MHD_OptionItem tls[] = {
        {MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)https_key_pem},
        {MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)https_cert_pem},
        {MHD_OPTION_END, 0, NULL},
    };
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_cls,
                            MHD_OPTION_ARRAY, https_key_pem != NULL ? tls : tls + 2,
                            MHD_OPTION_SOCK_ADDR, bind_address,
                            MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
                            MHD_OPTION_URI_LOG_CALLBACK, uri_log, uri_log_cls,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                            MHD_OPTION_END);
}

uint16_t ps_mhd_daemon_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

unsigned int ps_mhd_daemon_connections(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info == NULL ? 0 : info->num_connections;
}

enum MHD_Result ps_mhd_set_connection_timeout(struct MHD_Connection *connection, unsigned int seconds) {
    return MHD_set_connection_option(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds);
}
