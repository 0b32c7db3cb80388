#include <ucs/type/status.h>

const char *ucs_status_string(ucs_status_t status)
{
    switch (status) {
    case UCS_OK:                       return "success";
    case UCS_INPROGRESS:               return "operation in progress";
    case UCS_ERR_NO_MESSAGE:           return "no pending message";
    case UCS_ERR_NO_RESOURCE:          return "no resources are available to initiate the operation";
    case UCS_ERR_IO_ERROR:             return "input/output error";
    case UCS_ERR_NO_MEMORY:            return "out of memory";
    case UCS_ERR_INVALID_PARAM:        return "invalid parameter";
    case UCS_ERR_UNREACHABLE:          return "destination is unreachable";
    case UCS_ERR_INVALID_ADDR:         return "address not valid";
    case UCS_ERR_NOT_IMPLEMENTED:      return "function not implemented";
    case UCS_ERR_MESSAGE_TRUNCATED:    return "message truncated";
    case UCS_ERR_NO_PROGRESS:          return "no progress";
    case UCS_ERR_BUFFER_TOO_SMALL:     return "provided buffer is too small";
    case UCS_ERR_NO_ELEM:              return "no such element";
    case UCS_ERR_SOME_CONNECTS_FAILED: return "failed to connect some of the requested endpoints";
    case UCS_ERR_NO_DEVICE:            return "no such device";
    case UCS_ERR_BUSY:                 return "device is busy";
    case UCS_ERR_CANCELED:             return "request canceled";
    case UCS_ERR_SHMEM_SEGMENT:        return "shared memory error";
    case UCS_ERR_ALREADY_EXISTS:       return "element already exists";
    case UCS_ERR_OUT_OF_RANGE:         return "index out of range";
    case UCS_ERR_TIMED_OUT:            return "operation timed out";
    case UCS_ERR_EXCEEDS_LIMIT:        return "user-defined limit was reached";
    case UCS_ERR_UNSUPPORTED:          return "unsupported operation";
    case UCS_ERR_REJECTED:             return "operation rejected by remote peer";
    case UCS_ERR_NOT_CONNECTED:        return "endpoint is not connected";
    case UCS_ERR_CONNECTION_RESET:     return "connection reset by remote peer";
    case UCS_ERR_ENDPOINT_TIMEOUT:     return "endpoint timeout";
    default:
        break;
    }

    if (UCS_IS_LINK_ERROR(status)) {
        return "link failure";
    } else if (UCS_IS_ENDPOINT_ERROR(status)) {
        return "endpoint failure";
    }

    return "unknown error";
}
