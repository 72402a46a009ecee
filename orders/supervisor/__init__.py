"""The supervisor (SPEC V1-V5): finds stuck attempts and requests their recovery."""
