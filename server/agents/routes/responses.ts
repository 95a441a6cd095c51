/** The error responses the family's write routes document (FastAPI-style bodies, see http/errors.ts). */
import { DetailError, HTTPValidationError } from "../../../schemas/common.ts";

export const ERRORS = { 404: DetailError, 409: DetailError, 422: HTTPValidationError };
